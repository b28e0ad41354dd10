/* SPDX-License-Identifier: MIT */
/*
 * fiber.c - fibers for the deterministic scheduler: stacks with guard
 * pages, the switch, and the sanitizers' fiber annotations (the only file
 * that knows about them).
 *
 * AddressSanitizer must be told when the stack changes, or it reports the
 * new stack's frames as stack-buffer-overflows and loses fake stacks:
 * __sanitizer_start_switch_fiber(&save, new_lo, new_size) just before the
 * switch, __sanitizer_finish_switch_fiber(save, &old_lo, &old_size) just
 * after it, on the new stack.  The main fiber's bounds are learnt from the
 * first finish call a new fiber makes.
 *
 * ThreadSanitizer gives every fiber its own context (clock, shadow call
 * stack) and is told of each switch with __tsan_switch_to_fiber(to,
 * __tsan_switch_to_fiber_no_sync): the handoff creates no happens-before
 * edge, so two tasks that touch the same memory without synchronising in
 * the allocator (atomics, spinlocks, vCPU handoff) are reported even though
 * they never really ran at the same time.  The scheduler's own bookkeeping
 * is shared by all fibers without synchronisation by construction, so it
 * runs between sched_tsan_ignore_begin/end; runs are fenced by explicit
 * release/acquire pairs (sched.c) as thread creation and join would be.
 */
#include <errno.h>
#include <string.h>

#include "sched_int.h"

#ifdef SCHED_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef SCHED_TSAN
#include <sanitizer/tsan_interface.h>
/* The dynamic annotations TSan exports (no public header declares them). */
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#endif

void fiber_first_entry(struct fiber *f);

/* The main fiber of this thread, for ASan's bounds (learnt lazily). */
static _Thread_local struct fiber *main_fiber;

void fiber_init_main(struct fiber *f)
{
	memset(f, 0, sizeof(*f));
#ifdef SCHED_TSAN
	f->tsan = __tsan_get_current_fiber();
#endif
	main_fiber = f;
}

/*
 * The initial frame, as sched_ctx_switch leaves a suspended fiber: from
 * sp up, r15 r14 r13 r12 rbx rbp and the return address.  sp is 8 mod 16
 * so that rsp is 16-byte aligned after the ret into sched_fiber_start and
 * its call leaves the entry function the ABI's alignment.
 */
static void fiber_prepare(struct fiber *f)
{
	uintptr_t top = ((uintptr_t)f->stack_lo + f->stack_size) & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)(top - 72);
	sp[0] = 0;                              /* r15 */
	sp[1] = 0;                              /* r14 */
	sp[2] = (uint64_t)(uintptr_t)fiber_first_entry;  /* r13: called by sched_fiber_start ... */
	sp[3] = (uint64_t)(uintptr_t)f;                  /* r12: ... with this argument */
	sp[4] = 0;                              /* rbx */
	sp[5] = 0;                              /* rbp */
	sp[6] = (uint64_t)(uintptr_t)sched_fiber_start;  /* return address */
	sp[7] = 0;
	sp[8] = 0;
	f->sp = f->initial_sp = sp;
}

int fiber_create(struct fiber *f, size_t stack_size, void (*entry)(void *), void *arg)
{
	memset(f, 0, sizeof(*f));
	f->map = sched_os_stack_map(stack_size, &f->map_size, &f->stack_lo);
	if (!f->map)
		return -1;
	f->stack_size = stack_size;
	f->entry = entry;
	f->arg = arg;
#ifdef SCHED_TSAN
	f->tsan = __tsan_create_fiber(0);
#endif
	fiber_prepare(f);
	return 0;
}

#ifdef SCHED_TSAN
/*
 * Destroy the TSan context of a suspended fiber.  Every fiber is suspended
 * inside exactly one ignore region of the scheduler (all switches away
 * happen there), which TSan would report as a thread finished with ignores
 * enabled: end it as that fiber first - TSan's current fiber changes, the
 * stack does not.
 */
static void tsan_retire(struct fiber *f)
{
	void *self = __tsan_get_current_fiber();
	__tsan_switch_to_fiber(f->tsan, __tsan_switch_to_fiber_no_sync);
	AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
	__tsan_switch_to_fiber(self, __tsan_switch_to_fiber_no_sync);
	__tsan_destroy_fiber(f->tsan);
	f->tsan = NULL;
}
#endif

int fiber_reset(struct fiber *f)
{
#ifdef SCHED_TSAN
	/* A fresh mapping clears the shadow of the dead frames (TSan's munmap
	 * interceptor resets it), and a fresh context its shadow call stack. */
	sched_os_unmap(f->map, f->map_size);
	f->map = sched_os_stack_map(f->stack_size, &f->map_size, &f->stack_lo);
	if (!f->map)
		return -1;
	tsan_retire(f);
	f->tsan = __tsan_create_fiber(0);
#endif
#ifdef SCHED_ASAN
	/* The abandoned frames left their red zones poisoned. */
	ASAN_UNPOISON_MEMORY_REGION(f->stack_lo, f->stack_size);
#endif
	fiber_prepare(f);
	return 0;
}

void fiber_destroy(struct fiber *f)
{
	if (!f->map)
		return;
#ifdef SCHED_TSAN
	if (f->sp != f->initial_sp)
		tsan_retire(f);                 /* it ran: suspended in an ignore region */
	else
		__tsan_destroy_fiber(f->tsan);
#endif
#ifdef SCHED_ASAN
	ASAN_UNPOISON_MEMORY_REGION(f->stack_lo, f->stack_size);
#endif
	sched_os_unmap(f->map, f->map_size);
	memset(f, 0, sizeof(*f));
}

void fiber_switch(struct fiber *from, struct fiber *to)
{
	/* Read what the switch needs first: after TSan's switch every access
	 * counts as the next fiber's, outside its ignore region. */
	void *sp = to->sp;
	void **save = &from->sp;
#ifdef SCHED_ASAN
	void *fake = NULL;
	const void *old_lo = NULL;
	size_t old_size = 0;
	__sanitizer_start_switch_fiber(&fake, to->stack_lo, to->stack_size);
#endif
#ifdef SCHED_TSAN
	__tsan_switch_to_fiber(to->tsan, __tsan_switch_to_fiber_no_sync);
#endif
	sched_ctx_switch(save, sp);
#ifdef SCHED_ASAN
	__sanitizer_finish_switch_fiber(fake, &old_lo, &old_size);
#endif
}

/*
 * Where every new fiber begins (sched_fiber_start calls it): finish the
 * sanitizer's side of the first switch, then run the entry - inside a TSan
 * ignore region, as every switch-in lands - which never returns (it
 * switches away for good).
 */
void fiber_first_entry(struct fiber *f)
{
	/* The entry runs the scheduler's code first: inside its TSan ignore
	 * region, which the entry keeps balanced around the task's code. */
	sched_tsan_ignore_begin();
#ifdef SCHED_ASAN
	const void *old_lo = NULL;
	size_t old_size = 0;
	__sanitizer_finish_switch_fiber(NULL, &old_lo, &old_size);
	if (main_fiber && !main_fiber->stack_lo) {
		/* The first fiber ever is started by the scheduler from main. */
		main_fiber->stack_lo = (void *)old_lo;
		main_fiber->stack_size = old_size;
	}
#endif
	f->entry(f->arg);
	__builtin_trap();
}

#ifdef SCHED_TSAN
void sched_tsan_ignore_begin(void)
{
	AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
	AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
}
void sched_tsan_ignore_end(void)
{
	AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
}
void sched_tsan_release(void *addr)
{
	__tsan_release(addr);
}
void sched_tsan_acquire(void *addr)
{
	__tsan_acquire(addr);
}
void sched_tsan_release_as(struct fiber *self, struct fiber *f, void *addr)
{
	/* Only TSan's notion of the current fiber changes; no stack switch. */
	__tsan_switch_to_fiber(f->tsan, __tsan_switch_to_fiber_no_sync);
	__tsan_release(addr);
	__tsan_switch_to_fiber(self->tsan, __tsan_switch_to_fiber_no_sync);
}
#endif

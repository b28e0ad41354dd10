/* SPDX-License-Identifier: MIT */
/*
 * switch_x86_64.c - the fiber context switch, in top-level assembly.
 *
 * sched_ctx_switch(void **save_sp, void *new_sp) pushes the System V
 * callee-saved registers (rbp, rbx, r12-r15) on the running stack, stores
 * rsp in *save_sp, loads new_sp and pops the same six registers of the
 * other fiber before returning into it.  Everything else (caller-saved
 * registers, flags) is dead across a call by the ABI, and nothing here
 * changes MXCSR or the x87 control word, so they need no saving.  No
 * system call, no signal mask: this is what makes the scheduler ~100x
 * faster than swapcontext().
 *
 * A new fiber's stack is prepared by fiber.c to look as if it had called
 * sched_ctx_switch: six register slots (r13 = entry function, r12 = its
 * argument) and a return address of sched_fiber_start, which calls
 * entry(arg) on a 16-byte aligned stack.  entry never returns.
 */
#if !defined(__x86_64__)
#error "the deterministic scheduler's context switch is x86-64 only"
#endif

__asm__(
	".text\n"
	".globl sched_ctx_switch\n"
	".type sched_ctx_switch,@function\n"
	".p2align 4\n"
	"sched_ctx_switch:\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size sched_ctx_switch, .-sched_ctx_switch\n"
	"\n"
	".globl sched_fiber_start\n"
	".type sched_fiber_start,@function\n"
	".p2align 4\n"
	"sched_fiber_start:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined rip\n"       /* the bottom frame: unwinders stop here */
	"	xorl %ebp, %ebp\n"
	"	movq %r12, %rdi\n"
	"	callq *%r13\n"
	"	ud2\n"
	"	.cfi_endproc\n"
	".size sched_fiber_start, .-sched_fiber_start\n"
);

/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the trace of a run: every event (task, vCPU, point, kind,
 * argument) is folded into a 64-bit FNV-1a-style hash (one word and one
 * multiply per event; operation names byte by byte), and, when the
 * options name a timeline stream, printed as one line of a readable
 * interleaving:
 *
 *     step  task     cpu  op                      point            event
 *        3  T1:free    1  [4] free task=1 idx=0   pcp_before_lock  point at=2
 *        4  T1:free    1  [4] free task=1 idx=0   pcp_locked       point at=3 (in the interrupt handler)
 *        4  T1:free    1  [4] free task=1 idx=0   pcp_before_lock  irq raised at pcp_before_lock (the handler ...)
 *        4  T1:free    1  [4] free task=1 idx=0   -                switch -> T0:alloc
 *
 * The op column is the task's label (sched_set_label: what the scenario
 * says the task is doing), "-" without one; at=N counts the task's switch
 * points since its mark (sched_mark), the key of SCHED_SCRIPT's actions.
 * Two runs with equal hashes took the same decisions at the same points
 * on the same vCPUs; a replay whose hash differs is non-deterministic (or
 * ran another build).  No address enters the hash: only indices, point
 * ids, vCPU numbers, scenario-chosen arguments and operation names.
 */
#include <string.h>

#include "sched_int.h"

#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv_str(uint64_t h, const char *s)
{
	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= FNV_PRIME;
	}
	return h;
}

static const char *wait_reason_name(int why)
{
	switch (why) {
	case MM_WAIT_SPIN: return "wait:spinlock";
	case MM_WAIT_VCPU: return "wait:vcpu";
	case MM_WAIT_HOTPLUG: return "wait:hotplug";
	case MM_WAIT_CPUS_LOCK: return "wait:cpus_lock";
	case MM_WAIT_MUTEX: return "wait:mutex";
	case SCHED_WAIT_USER: return "wait:sched_wait";
	default: return "wait:?";
	}
}

static const char *task_name(struct sched *s, int i)
{
	if (i < 0 || i >= s->n || !s->task[i].desc->name)
		return "?";
	return s->task[i].desc->name;
}

void trace_event(struct sched *s, enum sched_ev ev, int task, int cpu, int point, long arg, const char *name)
{
	struct sched_live *L = s->live;
	/* A switch point of the task: SCHED_SCRIPT's actions are keyed to their count since its mark. */
	if ((ev == EV_POINT || ev == EV_WAIT || ev == EV_YIELD || ev == EV_ATOMIC) && task >= 0 && task < s->n)
		s->task[task].mark_points++;
	/* One word per event: kind, task, vCPU, point, then the argument. */
	uint64_t w = (uint64_t)ev | (uint64_t)(uint8_t)(task + 1) << 8 | (uint64_t)(uint8_t)(cpu + 1) << 16 |
		     (uint64_t)(uint8_t)point << 24 | (uint64_t)(uint32_t)arg << 32;
	uint64_t h = L->trace_hash;
	if (name)
		h = fnv_str(h, name);
	/* FNV-1a's xor-multiply on the whole word, with murmur3's finaliser
	 * constant and a fold so high bits feed back: one multiply per event. */
	h = (h ^ w) * 0xff51afd7ed558ccdULL;
	h ^= h >> 32;
	L->trace_hash = h;

	FILE *f = s->o->timeline;
	if (!f)
		return;
	char who[48], where[16], what[96];
	const char *pt = "-";
	if (task < 0)
		snprintf(who, sizeof(who), "sched");    /* the scheduler itself (the first decision) */
	else
		snprintf(who, sizeof(who), "T%d:%s", task, task_name(s, task));
	if (cpu >= 0)
		snprintf(where, sizeof(where), "%d", cpu);
	else
		snprintf(where, sizeof(where), "-");
	switch (ev) {
	case EV_START:
		snprintf(what, sizeof(what), arg >= 0 ? "start (attach vcpu %ld)" : "start", arg);
		break;
	case EV_POINT:
		pt = mm_pp_name((enum mm_pp)point);
		/* The handler's own points come before the irq line that raised it (printed once it returned). */
		snprintf(what, sizeof(what), "point at=%lu%s", task >= 0 && task < s->n ? s->task[task].mark_points : 0,
			 mm_in_interrupt() ? " (in the interrupt handler)" : "");
		break;
	case EV_WAIT:
		pt = wait_reason_name(point);
		snprintf(what, sizeof(what), "wait (yield) at=%lu", task >= 0 && task < s->n ? s->task[task].mark_points : 0);
		break;
	case EV_YIELD:
		pt = "sched_point";
		snprintf(what, sizeof(what), "point at=%lu", task >= 0 && task < s->n ? s->task[task].mark_points : 0);
		break;
	case EV_ATOMIC:
		pt = "atomic";
		snprintf(what, sizeof(what), "point");
		break;
	case EV_EXIT:
		snprintf(what, sizeof(what), "exit %ld", arg);
		break;
	case EV_IRQ:
		pt = mm_pp_name((enum mm_pp)point);
		snprintf(what, sizeof(what), "irq raised at %s (%s)", mm_pp_name((enum mm_pp)point),
			 arg ? "the handler ran: the lines above" : "refused");
		break;
	case EV_MIGRATE:
		if (point >= 64)
			snprintf(what, sizeof(what), "migrate -> vcpu %ld (now on %d)", arg, point - 64);
		else
			snprintf(what, sizeof(what), "migrate -> vcpu %ld (refused)", arg);
		break;
	case EV_SWITCH:
		snprintf(what, sizeof(what), "switch -> T%ld:%s", arg, task_name(s, (int)arg));
		break;
	case EV_OP:
		snprintf(what, sizeof(what), "op %s %ld", name ? name : "?", arg);
		break;
	case EV_FAIL:
		snprintf(what, sizeof(what), "FAIL (%s)", sched_outcome_name((enum sched_outcome)arg));
		break;
	default:
		snprintf(what, sizeof(what), "?");
		break;
	}
	const char *label = task >= 0 && task < s->n && s->task[task].label ? s->task[task].label : "-";
	fprintf(f, "%6lu  %-20s %3s  %-38s %-16s %s\n", L->steps, who, where, label, pt, what);
	if (s->o->fork)
		fflush(f);
}

void trace_timeline_header(struct sched *s)
{
	const struct sched_opts *o = s->o;
	FILE *f = o->timeline;
	if (!f)
		return;
	fprintf(f, "# scenario %s, policy %s, seed %#llx run %llu (run seed %#llx), %d tasks:",
		o->scenario ? o->scenario : "?", sched_policy_name(o->policy),
		(unsigned long long)o->seed, (unsigned long long)o->run,
		(unsigned long long)sched_seed(o->seed, o->run), s->n);
	for (int i = 0; i < s->n; i++)
		fprintf(f, " T%d:%s", i, task_name(s, i));
	fprintf(f, "\n%6s  %-20s %3s  %-38s %-16s %s\n", "step", "task", "cpu", "op", "point", "event");
}

void sched_mark(unsigned long mark)
{
	struct sched *s = sched_engine_if_any();
	if (s && s->active && s->cur >= 0) {
		sched_tsan_ignore_begin();
		s->task[s->cur].mark = mark;
		s->task[s->cur].mark_points = 0;
		sched_tsan_ignore_end();
	}
}

void sched_set_label(const char *label)
{
	struct sched *s = sched_engine_if_any();
	if (s && s->active && s->cur >= 0) {
		sched_tsan_ignore_begin();      /* engine state, shared by the fibers */
		s->task[s->cur].label = label;
		sched_tsan_ignore_end();
	}
}

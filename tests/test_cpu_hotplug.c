/* SPDX-License-Identifier: MIT */
/*
 * test_cpu_hotplug.c - vCPU offline/online: cpuhp callbacks run in
 * registration order on online and in reverse on dead (over a full table
 * too, its last slot included; a state may have only one of the two), while the hotplug
 * operation holds the vCPU; a failing online callback rolls back; an
 * offline vCPU cannot be attached (explicit attach waits for it, implicit
 * attach skips it); the last vCPU stays; offlining a held vCPU waits for
 * its holder to leave (it does so at its next preemptible point) or fails
 * with -EBUSY in the non-blocking variant, which leaves the holder where
 * it is; cpus_read_lock() holds hotplug off; a hotplug writer on a vCPU
 * that waits for another writer or for a reader sleeps off its vCPU and
 * comes back to it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "mm/cpu.h"
#include "test.h"

static void yield_wait(enum mm_wait_reason why, const void *what, void *ctx)
{
	(void)why; (void)what; (void)ctx;
	sched_yield();
}

/* ---- callbacks: order, context, rollback ---- */

static char order[64];
static int fail_b_once;
static int bad_context;

static void note(char c, struct mm *mm, unsigned int cpu, bool going_online)
{
	size_t n = strlen(order);
	if (n + 1 < sizeof(order)) {
		order[n] = c;
		order[n + 1] = 0;
	}
	/* the vCPU is held by the hotplug operation, not by the caller, and not online yet / any more */
	const struct mm_task *h = mm_cpu_holder(mm, (int)cpu);
	if (!h || h == mm_task_current() || mm_cpu_is_online(mm, (int)cpu))
		bad_context++;
	(void)going_online;
}
static int on_a(struct mm *mm, unsigned int cpu) { note('a', mm, cpu, true); return 0; }
static int on_b(struct mm *mm, unsigned int cpu)
{
	note('b', mm, cpu, true);
	if (fail_b_once) {
		fail_b_once = 0;
		return -ENOMEM;
	}
	return 0;
}
static int on_c(struct mm *mm, unsigned int cpu) { note('c', mm, cpu, true); return 0; }
static int dead_a(struct mm *mm, unsigned int cpu) { note('A', mm, cpu, false); return 0; }
static int dead_b(struct mm *mm, unsigned int cpu) { note('B', mm, cpu, false); return 0; }
static int dead_c(struct mm *mm, unsigned int cpu) { note('C', mm, cpu, false); return 0; }

static struct mm *hmm;
static atomic_int attached_cpu = -1;

static void *attach_one(void *arg)
{
	mm_set_wait_hook(yield_wait, NULL);
	atomic_store(&attached_cpu, mm_cpu_attach(hmm, (int)(long)arg));
	mm_cpu_detach(hmm);
	return NULL;
}

static void test_callbacks(void)
{
	pthread_t th;
	hmm = test_make_mm(3, false);
	REQUIRE(hmm);
	/* The allocator's layers registered their states at creation: ids continue after them. */
	int id_a = mm_cpuhp_register(hmm, "a", on_a, dead_a);
	CHECK(id_a >= 0);
	CHECK(mm_cpuhp_register(hmm, "b", on_b, dead_b) == id_a + 1);
	CHECK(mm_cpuhp_register(hmm, "c", on_c, dead_c) == id_a + 2);
	CHECK(mm_cpuhp_register(hmm, NULL, on_c, dead_c) == -EINVAL);

	CHECK(mm_num_online_cpus(hmm) == 3);
	order[0] = 0;
	CHECK(mm_cpu_offline(hmm, 1) == 0);
	CHECK_MSG(strcmp(order, "CBA") == 0, "dead callbacks ran as \"%s\"", order);
	CHECK(!mm_cpu_is_online(hmm, 1) && mm_num_online_cpus(hmm) == 2);
	order[0] = 0;
	CHECK(mm_cpu_offline(hmm, 1) == 0);        /* already offline: nothing runs */
	CHECK(order[0] == 0);

	/* an offline vCPU is never attached: the implicit attach skips it ... */
	CHECK(mm_cpu_offline(hmm, 0) == 0);
	CHECK(raw_smp_processor_id(hmm) == 2);
	CHECK(mm_cpu_detach(hmm) == 0);
	/* ... and the last online vCPU stays */
	CHECK(mm_cpu_offline(hmm, 2) == -EBUSY);
	CHECK(mm_cpu_is_online(hmm, 2));

	/* ... an explicit attach waits until it comes back */
	REQUIRE(pthread_create(&th, NULL, attach_one, (void *)1L) == 0);
	usleep(50 * 1000);
	CHECK_MSG(atomic_load(&attached_cpu) == -1, "attached to an offline vCPU");
	order[0] = 0;
	CHECK(mm_cpu_online(hmm, 1) == 0);
	CHECK_MSG(strcmp(order, "abc") == 0, "online callbacks ran as \"%s\"", order);
	pthread_join(th, NULL);
	CHECK(atomic_load(&attached_cpu) == 1);

	/* a failing online callback rolls back the states before it */
	fail_b_once = 1;
	order[0] = 0;
	CHECK(mm_cpu_online(hmm, 0) == -ENOMEM);
	CHECK_MSG(strcmp(order, "abA") == 0, "failed online ran as \"%s\"", order);
	CHECK(!mm_cpu_is_online(hmm, 0));
	CHECK(mm_cpu_online(hmm, 0) == 0);
	CHECK(mm_cpu_is_online(hmm, 0) && mm_num_online_cpus(hmm) == 3);

	/* a removed state no longer runs */
	mm_cpuhp_remove(hmm, id_a + 1);
	order[0] = 0;
	CHECK(mm_cpu_offline(hmm, 2) == 0);
	CHECK(mm_cpu_online(hmm, 2) == 0);
	CHECK_MSG(strcmp(order, "CAac") == 0, "after remove: \"%s\"", order);
	CHECK(bad_context == 0);

	/* the caller's own vCPU: it is moved off first */
	CHECK(mm_cpu_attach(hmm, 1) == 1);
	CHECK(mm_cpu_offline(hmm, 1) == 0);
	CHECK(mm_cpu_current(hmm) == -1);
	CHECK(raw_smp_processor_id(hmm) == 0);
	preempt_disable();
	CHECK(mm_cpu_offline(hmm, 0) == -EPERM);   /* cannot leave it while pinned */
	preempt_enable();
	CHECK(mm_cpu_online(hmm, 1) == 0);
	CHECK(mm_cpu_offline(hmm, 5) == -EINVAL && mm_cpu_online(hmm, -1) == -EINVAL);

	struct mm_cpu_stats st;
	mm_cpu_get_stats(hmm, -1, &st);
	CHECK(st.offlines == 4 && st.onlines == 4);
	mm_cpu_detach(hmm);
	mm_destroy(hmm);
}

/* ---- a full state table ---- */

/* The dead walk over a full table starts at its last slot, never past it
 * (cpuhp[MM_CPUHP_MAX] is the next member of struct mm_smp: UBSan's bounds
 * check stops an index of MM_CPUHP_MAX), and runs every filler once. */
static int full_first = -1, full_dead_runs, full_online_runs;
static int full_dead(struct mm *mm, unsigned int cpu)
{
	(void)mm; (void)cpu;
	full_dead_runs++;
	return 0;
}
static int full_online(struct mm *mm, unsigned int cpu)
{
	(void)mm; (void)cpu;
	full_online_runs++;
	return 0;
}

static void test_full_table(void)
{
	struct mm *mm = test_make_mm(2, false);
	REQUIRE(mm);
	/* every slot the allocator's layers left, until -ENOSPC */
	int id, n = 0;
	while ((id = mm_cpuhp_register(mm, "filler", full_online, full_dead)) >= 0) {
		if (full_first < 0)
			full_first = id;
		CHECK(id == full_first + n);
		n++;
		REQUIRE(n <= MM_CPUHP_MAX);
	}
	CHECK(id == -ENOSPC);
	CHECK_MSG(full_first + n == MM_CPUHP_MAX, "states end at %d of %d", full_first + n, MM_CPUHP_MAX);
	CHECK(mm_cpu_offline(mm, 1) == 0);
	CHECK_MSG(full_dead_runs == n, "%d of %d filler dead callbacks ran", full_dead_runs, n);
	CHECK(mm_cpu_online(mm, 1) == 0 && mm_cpu_is_online(mm, 1));
	CHECK_MSG(full_online_runs == n, "%d of %d filler online callbacks ran", full_online_runs, n);
	/* a removed slot stays taken (ids are stable): the table is still full */
	mm_cpuhp_remove(mm, MM_CPUHP_MAX - 1);
	CHECK(mm_cpuhp_register(mm, "late", NULL, full_dead) == -ENOSPC);
	CHECK(mm_cpu_offline(mm, 1) == 0);
	CHECK_MSG(full_dead_runs == 2 * n - 1, "after remove: %d dead runs", full_dead_runs);
	CHECK(mm_cpu_online(mm, 1) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* ---- offlining a held vCPU ---- */

/* ---- a state with only one of its callbacks: the missing one is skipped ---- */

static int half_on, half_dead;
static int on_only(struct mm *mm, unsigned int cpu) { (void)mm; (void)cpu; half_on++; return 0; }
static int dead_only(struct mm *mm, unsigned int cpu) { (void)mm; (void)cpu; half_dead++; return 0; }

static void test_half_states(void)
{
	struct mm *mm = test_make_mm(2, false);
	REQUIRE(mm);
	CHECK(mm_cpuhp_register(mm, "on-only", on_only, NULL) >= 0);
	CHECK(mm_cpuhp_register(mm, "dead-only", NULL, dead_only) >= 0);
	CHECK(mm_cpu_offline(mm, 1) == 0);
	CHECK_MSG(half_on == 0 && half_dead == 1, "offline: online callback ran %d times, dead %d", half_on,
		  half_dead);
	CHECK(mm_cpu_online(mm, 1) == 0);
	CHECK_MSG(half_on == 1 && half_dead == 1, "online: online callback ran %d times, dead %d", half_on,
		  half_dead);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static struct mm *bmm;
static atomic_int b_stop, b_ready;
static atomic_int b_first_cpu = -1, b_last_cpu = -1;
static atomic_long b_rounds;            /* the holder's loop rounds, each past a preemption point */
static atomic_int b_park, b_parked;     /* the holder waits between rounds, off any preemption point */

static void *busy(void *arg)
{
	(void)arg;
	spinlock_t lock;
	spin_lock_init(&lock);
	mm_set_wait_hook(yield_wait, NULL);
	atomic_store(&b_first_cpu, mm_cpu_attach(bmm, 1));
	atomic_store(&b_ready, 1);
	while (!atomic_load(&b_stop)) {
		spin_lock(&lock);
		spin_unlock(&lock);              /* a preemption point: leaves a dying vCPU here */
		atomic_store(&b_last_cpu, raw_smp_processor_id(bmm));
		atomic_fetch_add(&b_rounds, 1);
		while (atomic_load(&b_park)) {
			atomic_store(&b_parked, 1);
			sched_yield();
		}
		atomic_store(&b_parked, 0);
	}
	mm_cpu_detach(bmm);
	return NULL;
}

static void test_offline_held(void)
{
	pthread_t th;
	bmm = test_make_mm(2, false);
	REQUIRE(bmm);
	mm_set_wait_hook(yield_wait, NULL);
	REQUIRE(pthread_create(&th, NULL, busy, NULL) == 0);
	while (!atomic_load(&b_ready))
		sched_yield();
	CHECK(atomic_load(&b_first_cpu) == 1);
	/*
	 * The try fails while the holder is parked between preemption points
	 * (the try marks the vCPU dying while it tries: a holder passing a
	 * preemption point just then would leave, try failing or not).
	 */
	atomic_store(&b_park, 1);
	while (!atomic_load(&b_parked))
		sched_yield();
	CHECK(mm_cpu_try_offline(bmm, 1) == -EBUSY);
	CHECK(mm_cpu_is_online(bmm, 1));
	atomic_store(&b_park, 0);
#ifdef MM_TEST_HOOKS
	/* The failed try leaves no "dying" request behind: the holder passes
	 * its preemption points and stays on vCPU 1. */
	long r0 = atomic_load(&b_rounds);
	for (int i = 0; i < 100000 && atomic_load(&b_rounds) < r0 + 1000; i++)
		usleep(100);
	CHECK(atomic_load(&b_rounds) >= r0 + 1000);
	CHECK_MSG(atomic_load(&b_last_cpu) == 1, "the holder moved to vCPU %d after a failed try_offline",
		  atomic_load(&b_last_cpu));
	struct mm_cpu_stats st0;
	mm_cpu_get_stats(bmm, 1, &st0);
	CHECK(st0.migrations_out == 0);
	/* the holder leaves at its next spin_unlock and continues on vCPU 0 */
	CHECK(mm_cpu_offline(bmm, 1) == 0);
	CHECK(!mm_cpu_is_online(bmm, 1));
	usleep(10 * 1000);
	CHECK(atomic_load(&b_last_cpu) == 0);
	struct mm_cpu_stats st;
	mm_cpu_get_stats(bmm, 1, &st);
	CHECK(st.migrations_out == 1 && st.pp_migrate[MM_PP_SPIN_UNLOCK] == 1);
	atomic_store(&b_stop, 1);
	pthread_join(th, NULL);
	CHECK(mm_cpu_online(bmm, 1) == 0);
#else
	/* no preemption points: the holder leaves only when it detaches */
	atomic_store(&b_stop, 1);
	CHECK(mm_cpu_offline(bmm, 1) == 0);
	pthread_join(th, NULL);
	CHECK(mm_cpu_online(bmm, 1) == 0);
#endif

	/* cpus_read_lock keeps hotplug out until the unlock */
	cpus_read_lock(bmm);
	CHECK(mm_cpu_is_online(bmm, 1));
	cpus_read_unlock(bmm);
	CHECK(mm_cpu_offline(bmm, 1) == 0 && mm_cpu_online(bmm, 1) == 0);
	mm_destroy(bmm);
}

static struct mm *rmm;
static atomic_int r_done;

static void *offliner(void *arg)
{
	(void)arg;
	mm_set_wait_hook(yield_wait, NULL);
	atomic_store(&r_done, mm_cpu_offline(rmm, 1) == 0 ? 1 : -1);
	return NULL;
}

static void test_read_lock(void)
{
	pthread_t th;
	rmm = test_make_mm(2, false);
	REQUIRE(rmm);
	cpus_read_lock(rmm);
	REQUIRE(pthread_create(&th, NULL, offliner, NULL) == 0);
	usleep(50 * 1000);
	CHECK_MSG(!atomic_load(&r_done) && mm_cpu_is_online(rmm, 1), "a vCPU went down under cpus_read_lock");
	cpus_read_unlock(rmm);
	pthread_join(th, NULL);
	CHECK(atomic_load(&r_done) == 1 && !mm_cpu_is_online(rmm, 1));
	mm_destroy(rmm);
}

/*
 * Two hotplug writers, and a writer behind a reader, with the waiting
 * writer on a vCPU: percpu_down_write() sleeps, so the writer gives its
 * vCPU up while it waits (sleeps counted on it) and takes it back
 * (wake-affine) when the lock is its own - whichever wait it slept in, the
 * other writer's bit or the readers.  It never returns without a vCPU.
 */
static struct mm *wmm;
static atomic_int w_in_cb, w_release, w_waits;
static atomic_int w_after = -2, w_ret = 1, w_done;

static void count_wait(enum mm_wait_reason why, const void *what, void *ctx)
{
	(void)what; (void)ctx;
	if (why == MM_WAIT_CPUS_LOCK)
		atomic_fetch_add(&w_waits, 1);
	sched_yield();
}

/* The online callback of vCPU 3 keeps its writer in cpus_write_lock until released. */
static int stall_online(struct mm *mm, unsigned int cpu)
{
	(void)mm;
	if (cpu == 3) {
		atomic_store(&w_in_cb, 1);
		while (!atomic_load(&w_release))
			sched_yield();
	}
	return 0;
}

static void *first_writer(void *arg)
{
	(void)arg;
	mm_set_wait_hook(yield_wait, NULL);
	CHECK(mm_cpu_online(wmm, 3) == 0);
	return NULL;
}

/* Attached to vCPU 0, offlines vCPU 2 (vCPU 1 in the reader case). */
static void *second_writer(void *arg)
{
	mm_set_wait_hook(count_wait, NULL);
	CHECK(mm_cpu_attach(wmm, 0) == 0);
	atomic_store(&w_ret, mm_cpu_offline(wmm, (int)(long)arg));
	atomic_store(&w_after, mm_cpu_holder(wmm, 0) == mm_task_current() ? 0 : -1);
	atomic_store(&w_done, 1);
	mm_cpu_detach(wmm);
	return NULL;
}

/* Until @flag is set (a bounded wait: a hung test says so). */
static bool wait_flag(atomic_int *flag, int want)
{
	for (int i = 0; i < 200000; i++) {
		if (atomic_load(flag) >= want)
			return true;
		usleep(50);
	}
	return false;
}

static void expect_back_on_vcpu(const char *how, unsigned long sleeps0)
{
	struct mm_cpu_stats st;
	mm_cpu_get_stats(wmm, 0, &st);
	CHECK_MSG(atomic_load(&w_ret) == 0, "%s: mm_cpu_offline returned %d", how, atomic_load(&w_ret));
	CHECK_MSG(atomic_load(&w_after) == 0, "%s: the writer returned without its vCPU", how);
	CHECK_MSG(st.sleeps == sleeps0 + 1, "%s: %lu sleeps on vCPU 0, want %lu", how, st.sleeps, sleeps0 + 1);
}

static void test_two_writers(void)
{
	pthread_t a, b;
	struct mm_cpu_stats st;
	wmm = test_make_mm(4, false);
	REQUIRE(wmm);
	mm_set_wait_hook(yield_wait, NULL);
	REQUIRE(mm_cpuhp_register(wmm, "test:stall", stall_online, NULL) >= 0);
	REQUIRE(mm_cpu_offline(wmm, 3) == 0);

	/* The writer bit: held by the online of vCPU 3, stalled in its callback. */
	mm_cpu_get_stats(wmm, 0, &st);
	REQUIRE(pthread_create(&a, NULL, first_writer, NULL) == 0);
	REQUIRE_MSG(wait_flag(&w_in_cb, 1), "the first writer never reached its callback");
	REQUIRE(pthread_create(&b, NULL, second_writer, (void *)2L) == 0);
	CHECK_MSG(wait_flag(&w_waits, 1), "the second writer never waited for the lock");
	CHECK_MSG(mm_cpu_holder(wmm, 0) == NULL && !atomic_load(&w_done),
		  "the second writer kept vCPU 0 while it waited for the first");
	atomic_store(&w_release, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	expect_back_on_vcpu("behind a writer", st.sleeps);
	CHECK(mm_cpu_is_online(wmm, 3) && !mm_cpu_is_online(wmm, 2));

	/* The readers: cpus_read_lock() held by this thread. */
	atomic_store(&w_waits, 0);
	atomic_store(&w_done, 0);
	atomic_store(&w_after, -2);
	mm_cpu_get_stats(wmm, 0, &st);
	cpus_read_lock(wmm);
	REQUIRE(pthread_create(&b, NULL, second_writer, (void *)1L) == 0);
	CHECK_MSG(wait_flag(&w_waits, 1), "the writer never waited for the reader");
	CHECK_MSG(mm_cpu_holder(wmm, 0) == NULL && !atomic_load(&w_done) && mm_cpu_is_online(wmm, 1),
		  "the writer kept vCPU 0, or went on, under cpus_read_lock");
	cpus_read_unlock(wmm);
	pthread_join(b, NULL);
	expect_back_on_vcpu("behind a reader", st.sleeps);
	CHECK(!mm_cpu_is_online(wmm, 1));
	CHECK(mm_cpu_online(wmm, 1) == 0 && mm_cpu_online(wmm, 2) == 0);
	mm_destroy(wmm);
}

int main(void)
{
	test_callbacks();
	test_full_table();
	test_half_states();
	test_offline_held();
	test_read_lock();
	test_two_writers();
	TEST_DONE();
}

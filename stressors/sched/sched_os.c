/* SPDX-License-Identifier: MIT */
/*
 * sched_os.c - the deterministic scheduler's one OS layer (STYLE.md rule
 * 3): fiber stack mappings with guard pages, the shared mapping and fork
 * of --fork mode, the SIGABRT handler of in-process mode, a clock for
 * statistics.  Error convention: NULL or -1 with errno set; nothing aborts.
 * The clock never feeds a scheduling decision.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sched_int.h"

static size_t os_page(void)
{
	static size_t page;
	if (!page) {
		long p = sysconf(_SC_PAGESIZE);
		page = p > 0 ? (size_t)p : 4096;
	}
	return page;
}

void *sched_os_stack_map(size_t size, size_t *map_size, void **lo)
{
	size_t page = os_page();
	size = (size + page - 1) & ~(page - 1);
	size_t total = size + page;
	char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* The guard page below the stack: an overflow faults instead of
	 * writing into the neighbouring fiber's stack. */
	if (mprotect(p, page, PROT_NONE)) {
		int e = errno;
		munmap(p, total);
		errno = e;
		return NULL;
	}
	*map_size = total;
	*lo = p + page;
	return p;
}

void sched_os_unmap(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

void *sched_os_map_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

int sched_os_fork_wait(int *status)
{
	fflush(NULL);           /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		return 0;
	for (;;) {
		if (waitpid(pid, status, 0) == pid)
			return 1;
		if (errno != EINTR)
			return -1;
	}
}

void sched_os_child_exit(int code)
{
	fflush(NULL);
	_exit(code);
}

bool sched_os_status_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void sched_os_describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d%s", WEXITSTATUS(status),
			 WEXITSTATUS(status) ? " (a sanitizer report?)" : "");
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended with wait status 0x%x", (unsigned)status);
}

static void (*abort_fn)(void);
static struct sigaction old_abort;

static void on_sigabrt(int sig)
{
	/* abort() released its lock before raising (glibc), so leaving the
	 * handler by a fiber switch is as safe as a longjmp out of it. */
	if (abort_fn)
		abort_fn();
	/* Not ours to take over: what was there before. */
	sigaction(SIGABRT, &old_abort, NULL);
	raise(sig);
}

void sched_os_catch_abort(void (*fn)(void))
{
	static atomic_int installed;
	if (atomic_exchange(&installed, 1))
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigabrt;
	sigemptyset(&sa.sa_mask);
	abort_fn = fn;
	sigaction(SIGABRT, &sa, &old_abort);
}

void sched_os_unblock_abort(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGABRT);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

double sched_os_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

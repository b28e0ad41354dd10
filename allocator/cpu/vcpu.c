/* SPDX-License-Identifier: MIT */
#include "cpu/vcpu.h"

_Thread_local struct mm_task_state mm_current_task;

int mm_cpus_setup(struct mm *mm, char *err, size_t errlen) { (void)mm; (void)err; (void)errlen; return 0; }
void mm_cpus_teardown(struct mm *mm) { (void)mm; }
void mm_cpus_reset(struct mm *mm) { (void)mm; }

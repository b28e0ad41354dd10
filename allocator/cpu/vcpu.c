/* SPDX-License-Identifier: MIT */
#include "cpu/vcpu.h"

_Thread_local struct mm_task_state mm_current_task;

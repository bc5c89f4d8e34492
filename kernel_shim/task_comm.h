// Mirrors get_task_comm() (include/linux/sched.h): the command name of a task's process, as the
// kernel's messages name it ("pid=%d, comm=%s").
#pragma once
#include <cstddef>

#include "kernel_shim/task.h"

namespace kshim {

inline constexpr size_t TASK_COMM_LEN = 16;

// A host process's task (tgid > 0: a preload client's thread) is named by the process's comm;
// the runtime's own tasks by their task name. Always NUL-terminated, truncated to
// TASK_COMM_LEN - 1 characters.
void get_task_comm(char (&buf)[TASK_COMM_LEN], const Task* t);

}  // namespace kshim

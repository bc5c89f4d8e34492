// get_task_comm (task_comm.h).
#include "kernel_shim/task_comm.h"

#include <cstdio>
#include <cstring>

namespace kshim {

void get_task_comm(char (&buf)[TASK_COMM_LEN], const Task* t) {
    buf[0] = '\0';
    if (!t)
        return;
    if (t->tgid > 0) {
        char path[40];
        std::snprintf(path, sizeof(path), "/proc/%d/comm", t->tgid);
        if (std::FILE* f = std::fopen(path, "re")) {
            const bool got = std::fgets(buf, TASK_COMM_LEN, f) != nullptr;
            std::fclose(f);
            if (got) {
                buf[std::strcspn(buf, "\n")] = '\0';
                return;
            }
            buf[0] = '\0';
        }
    }
    std::snprintf(buf, TASK_COMM_LEN, "%s", t->name.c_str());
}

}  // namespace kshim

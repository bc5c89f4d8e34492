// Mirrors kernel/cred.c (override_creds, revert_creds) and kernel/capability.c (capable).
#include "kernel_shim/cred.h"

#include "kernel_shim/task.h"

namespace kshim {

const cred init_cred{0, 0, CAP_FULL_SET};

const cred* current_cred() {
    const Task* t = current();
    return t && t->cred ? t->cred : &init_cred;
}

const cred* override_creds(const cred* c) {
    Task* t = current();
    if (!t)
        return nullptr;
    const cred* old = t->cred;
    t->cred = c;
    return old;
}

void revert_creds(const cred* old) {
    if (Task* t = current())
        t->cred = old;
}

bool capable(int cap) {
    if (cap < 0 || cap > CAP_LAST_CAP)
        return false;
    return cap_raised(current_cred()->cap_effective, cap);
}

}  // namespace kshim

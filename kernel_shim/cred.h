// Mirrors include/linux/cred.h and include/linux/capability.h: the credentials a task acts
// with, and capable(), which the DRM core and drivers ask at ioctl time (CAP_SYS_ADMIN for the
// DRM master rules, CAP_SYS_NICE for panthor's high group priorities).
//
// A task acts with its `cred` (kernel_shim/task.h); a task that was given none acts with
// init_cred, as every kernel thread does: root with every capability. A task that runs for a
// client process (the preload library's client threads, a simulated client's backend) acts with
// that process's credentials: the preload derives them from the host process's effective
// capabilities, the simulator from the client's setting, and both put them in place with
// override_creds()/revert_creds() around the call, as the kernel's own callers do.
//
// Difference: the kernel's creds are refcounted and copy-on-write (prepare_creds,
// commit_creds). Here a cred is a plain value owned by whoever installs it, and it must outlive
// its installation.
#pragma once
#include "kernel_shim/types.h"

namespace kshim {

// include/uapi/linux/capability.h: the capability numbers the stack asks about.
inline constexpr int CAP_SYS_ADMIN = 21;
inline constexpr int CAP_SYS_NICE = 23;
inline constexpr int CAP_LAST_CAP = 40;

struct kernel_cap_t {
    u64 val = 0;
};
inline constexpr kernel_cap_t CAP_EMPTY_SET{0};
inline constexpr kernel_cap_t CAP_FULL_SET{(u64{1} << (CAP_LAST_CAP + 1)) - 1};

inline constexpr kernel_cap_t cap_raise(kernel_cap_t c, int flag) {
    return kernel_cap_t{c.val | (u64{1} << flag)};
}
inline constexpr bool cap_raised(kernel_cap_t c, int flag) {
    return (c.val >> flag) & 1;
}

struct cred {
    u32 uid = 0;
    u32 euid = 0;
    kernel_cap_t cap_effective = CAP_EMPTY_SET;
};

// Root with every capability (kernel/cred.c's init_cred).
extern const cred init_cred;

// Not in the kernel: the credentials of an ordinary user process (uid 1000) holding `caps`.
constexpr cred user_cred(kernel_cap_t caps = CAP_EMPTY_SET, u32 uid = 1000) {
    return cred{uid, uid, caps};
}

// The current task's credentials (init_cred with no task, or a task given none).
const cred* current_cred();
// Makes `c` the current task's credentials; the previous ones are returned for revert_creds.
const cred* override_creds(const cred* c);
void revert_creds(const cred* old);

// Whether the current task may act with capability `cap` (in the initial user namespace).
bool capable(int cap);

// override_creds for a scope.
class ScopedCreds {
public:
    explicit ScopedCreds(const cred* c) : old_(override_creds(c)) {}
    ~ScopedCreds() { revert_creds(old_); }
    ScopedCreds(const ScopedCreds&) = delete;
    ScopedCreds& operator=(const ScopedCreds&) = delete;

private:
    const cred* old_;
};

}  // namespace kshim

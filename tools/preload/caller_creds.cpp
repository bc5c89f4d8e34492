// The caller's host credentials (caller_creds.h).
#include "tools/preload/caller_creds.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "kernel_shim/task.h"

namespace upanthor::preload {

kshim::cred host_creds(pid_t pid, uid_t euid) {
    // capget with _LINUX_CAPABILITY_VERSION_3: two 32-bit words per set.
    struct {
        kshim::u32 version;
        int pid;
    } hdr{0x20080522, pid};
    struct {
        kshim::u32 effective, permitted, inheritable;
    } data[2] = {};
    const uid_t uid = pid ? euid : geteuid();
    kshim::cred c = kshim::user_cred(kshim::CAP_EMPTY_SET, static_cast<kshim::u32>(uid));
    if (syscall(SYS_capget, &hdr, data) == 0)
        c.cap_effective.val = (data[0].effective | (kshim::u64{data[1].effective} << 32)) & kshim::CAP_FULL_SET.val;
    return c;
}

ActAsCaller::ActAsCaller() : ActAsCaller(0, 0) {}

ActAsCaller::ActAsCaller(pid_t pid, uid_t euid)
    : cred_(host_creds(pid, euid)), old_(kshim::override_creds(&cred_)), task_(kshim::current()) {
    old_tgid_ = task_ ? task_->tgid : 0;
    if (task_)
        task_->tgid = pid ? pid : getpid();
}

ActAsCaller::~ActAsCaller() {
    if (task_)
        task_->tgid = old_tgid_;
    kshim::revert_creds(old_);
}

}  // namespace upanthor::preload

// The credentials a client process's call acts with (docs/drm_core.md "Credentials"): what the
// host kernel says the calling process holds now, so capable() and the DRM master rules answer
// as they would for it.
#pragma once
#include <sys/types.h>

#include "kernel_shim/cred.h"

namespace kshim {
struct Task;
}

namespace upanthor::preload {

// The effective capabilities (capget) and euid of process `pid` (0: this one), now.
kshim::cred host_creds(pid_t pid = 0, uid_t euid = 0);

// While one lives, the current task acts with the caller's host credentials, and its process id
// is the caller's pid: the calling thread of this process (in-process mode), or a client process
// whose request a server thread serves. Read at every call, so a process that drops a capability
// loses it from its next call. Requires a current task.
class ActAsCaller {
public:
    ActAsCaller();
    ActAsCaller(pid_t pid, uid_t euid);
    ~ActAsCaller();
    ActAsCaller(const ActAsCaller&) = delete;
    ActAsCaller& operator=(const ActAsCaller&) = delete;

private:
    kshim::cred cred_;
    const kshim::cred* old_;
    kshim::Task* task_;
    int old_tgid_;
};

}  // namespace upanthor::preload

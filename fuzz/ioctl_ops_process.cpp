// (no upstream counterpart) fuzz_ioctl's process-level ops (fuzz/ioctl_ops.h, family Process):
// what a client does besides its ioctls. It closes its DRM file (drm_release: everything the
// file owned goes) and maybe reopens it, and time passes between calls (jobs run, timers fire,
// the device may autosuspend), in virtual time.
#include "fuzz/ioctl_program.h"
#include "kernel_shim/time.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

// Close, or close and reopen, a file.
void IoctlProgram::op_close_file(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    const int fi = c.file_idx;
    const uint8_t k = in_.u8();
    drm::drm_release(f);
    files_[fi] = nullptr;
    note("close", 0);
    if (k & 1) {
        render_[fi] = (k & 2) == 0;
        const int ret = drm::drm_open(&w_.ptdev()->base, &files_[fi], render_[fi]);
        if (ret)
            files_[fi] = nullptr;
        note("reopen", ret);
    }
}

// Let virtual time pass: jobs run, timers fire, the device may autosuspend.
void IoctlProgram::op_advance(const IoctlOpCall&) {
    static constexpr kshim::ktime_t steps[] = {0,
                                               kshim::NSEC_PER_USEC,
                                               100 * kshim::NSEC_PER_USEC,
                                               kshim::NSEC_PER_MSEC,
                                               20 * kshim::NSEC_PER_MSEC,
                                               200 * kshim::NSEC_PER_MSEC,
                                               6 * kshim::NSEC_PER_SEC};
    w_.rt().advance(steps[in_.below(7)]);
    note("advance", 0);
}

}  // namespace upanthor_fuzz

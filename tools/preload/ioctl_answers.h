// What a DRM file of the fake node answers before its own ioctl, in-process (interpose.cpp) and in
// `upanthor serve` (server_main.cpp) alike: the SYNCOBJ_WAIT / TIMELINE_WAIT deadlines (and
// panfrost's WAIT_BO timeout) shifted from the client's CLOCK_MONOTONIC to the runtime's clock
// (and back on the way out), and the primary
// node's two KMS resource queries answered as a display with nothing attached (docs/preload.md).
#pragma once

namespace drm {
struct drm_file;
}

namespace upanthor::preload {

inline constexpr int ENOIOCTLCMD = 515;

// -ENOIOCTLCMD when the file's own unlocked_ioctl should answer. `arg` is a user pointer;
// mono_offset_ns is host CLOCK_MONOTONIC minus the runtime clock.
int drm_file_ioctl(drm::drm_file* f, unsigned cmd, void* arg, long long mono_offset_ns);

}  // namespace upanthor::preload

// The driver behind the fake node: the real-thread runtime, the mock GPU's platform device and
// panthor probed on it, booted on the first open of a node and removed at exit.
#pragma once

namespace drm {
class drm_device;
}

namespace upanthor::preload {

// Boots on first call (thread-safe); nullptr if the probe failed (the reason is on stderr).
drm::drm_device* device_get();
// Makes the calling thread a kernel task of the runtime (once per thread), so kernel code it
// runs (ioctl, mmap) can lock, sleep and be woken. Requires a booted device.
void attach_thread();
// Host CLOCK_MONOTONIC minus the runtime clock: what turns a client's absolute DRM timeout into
// the runtime's clock.
long long monotonic_offset_ns();
// True once the driver is up (and until it is removed). A plain flag (atomic accesses): read by
// uninstrumented code that sanitizer runtimes call during their own start (interpose.cpp).
extern bool g_device_up;
bool device_booted();
// The exit handler as a __cxa_atexit callback: interpose.cpp registers it again after every
// static destructor registered once the driver is up, so the driver goes before any static the
// kernel code created lazily (exit runs those registrations last-first). Idempotent.
void device_exit_handler(void*);
// Removes the driver (exit): files still open are released first; leaks go to stderr.
void device_shutdown();

}  // namespace upanthor::preload

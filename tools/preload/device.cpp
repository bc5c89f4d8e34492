// Boot and removal of the driver behind the preload library (device.h): the host library's World
// (host/world.h), as every host boots it, on the real-thread runtime and for the whole process.
#include "tools/preload/device.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "drm/drm_device.h"
#include "drm/drm_file.h"
#include "drm/uaccess.h"
#include "host/gpu_models.h"
#include "host/world.h"
#include "kernel_shim/firmware.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/task.h"
#include "kernel_shim/time.h"
#include "tools/preload/files.h"
#include "tools/preload/gpu_report.h"
#include "tools/preload/host_task.h"

namespace upanthor::preload {
namespace {

struct World {
    upanthor::host::World* host = nullptr;
    drm::drm_device* ddev = nullptr;
    long long mono_offset = 0;
    pid_t pid = 0;  // a forked child has none of the driver's threads: it leaves the driver alone
    GpuFaults faults;
};

// The boot runs before any kernel runtime exists, on whichever client thread opens first, so it
// is serialised with a POSIX mutex rather than a kernel lock.
World* g_world = nullptr;  // set once by boot_locked(), under g_boot_lock
bool g_boot_failed = false;
pthread_mutex_t g_boot_lock = PTHREAD_MUTEX_INITIALIZER;

// The task of a client thread that attached itself; deleted when the thread ends.
struct ClientTask {
    kshim::Task* task = nullptr;
    ~ClientTask() {
        if (task)
            host_task_detach(task);
    }
};
thread_local ClientTask t_client;

// exit() runs the exiting thread's thread_local destructors before the atexit handlers, so the
// kernel's per-thread state of that thread (the slab magazines) is already gone here. The
// teardown therefore runs on a fresh thread (a POSIX one: the runtime is being taken down), which
// the leak check at its end then counts correctly.
void* shutdown_thread(void*) {
    device_shutdown();
    return nullptr;
}
void atexit_shutdown() {
    if (!__atomic_load_n(&g_world, __ATOMIC_ACQUIRE))
        return;
    pthread_t t;
    if (pthread_create(&t, nullptr, shutdown_thread, nullptr) == 0)
        pthread_join(t, nullptr);
    else
        device_shutdown();
    // This thread may still name the runtime's main task (it booted the driver), which is gone:
    // the static destructors that run next must see no task.
    kshim::set_current(nullptr);
}

bool boot_locked() {
    // UPANTHOR_LOG maps onto the shim's KSHIM_LOG (err/warn always print).
    if (const char* l = std::getenv("UPANTHOR_LOG"); l && *l && !std::getenv("KSHIM_LOG"))
        setenv("KSHIM_LOG", l, 0);
    if (const char* d = std::getenv("UPANTHOR_FIRMWARE_DIR"); d && *d)
        kshim::firmware_set_search_path(d);
    const char* model = std::getenv("UPANTHOR_GPU");
    if (!model || !*model)
        model = "default";
    const upanthor::host::GpuModel* gm = upanthor::host::find_gpu_model(model);
    if (!gm) {
        std::fprintf(stderr, "libupanthor_preload: UPANTHOR_GPU=%s: no such GPU model (models: %s)\n", model,
                     upanthor::host::gpu_model_names().c_str());
        return false;
    }
    // BOs are mapped into the client from the arena's memfd (interpose.cpp's mmap).
    if (kshim::page_arena_use_memfd() != 0) {
        std::fprintf(stderr, "libupanthor_preload: the page arena exists already without a memfd\n");
        return false;
    }
    // The client's pointers are real: checked against its mappings.
    const char* ua = std::getenv("UPANTHOR_UACCESS");
    drm::uaccess_set_mode(ua && std::strcmp(ua, "vm") == 0 ? drm::UaccessMode::ProcessVm
                                                           : drm::UaccessMode::FaultFixup);

    upanthor::host::World::Options opts;
    opts.runtime.mode = kshim::Mode::Real;
    if (const char* t = std::getenv("UPANTHOR_TRACE"); t && *t) {
        opts.runtime.trace = true;
        opts.runtime.trace_path = t;
    }
    opts.machine.model = model;
    // One attempt, as a kernel probes: the mock's timing does not depend on how the host
    // schedules its threads (docs/mock_hw.md "Real mode"), so a loaded host cannot time it out.
    auto* w = new World();
    w->host = new upanthor::host::World(opts);
    if (const int ret = w->host->status()) {
        std::fprintf(
            stderr, "libupanthor_preload: %s failed: %s%s\n", w->host->failed_step().c_str(), std::strerror(-ret),
            ret == -ENOENT ? " (no firmware image: build the target upanthor_firmware, or set UPANTHOR_FIRMWARE_DIR)"
                           : "");
        delete w->host;
        delete w;
        return false;
    }
    if (!arm_injected_faults(*w->host, &w->faults)) {
        delete w->host;
        delete w;
        return false;
    }
    // The runtime clock started at 0; DRM timeouts from the client are on CLOCK_MONOTONIC.
    w->mono_offset = static_cast<long long>(kshim::host_monotonic_ns()) - kshim::ktime_get();
    w->ddev = w->host->machine()->drm_dev();
    w->pid = getpid();
    files_install_fd_ops();
    __atomic_store_n(&g_world, w, __ATOMIC_RELEASE);
    __atomic_store_n(&g_device_up, true, __ATOMIC_RELEASE);
    // After the boot's own statics exist, so they are still alive when this runs (statics made
    // later are covered by the __cxa_atexit interposer, device.h).
    std::atexit(atexit_shutdown);
    return true;
}

}  // namespace

drm::drm_device* device_get() {
    if (World* w = __atomic_load_n(&g_world, __ATOMIC_ACQUIRE))
        return w->ddev;
    pthread_mutex_lock(&g_boot_lock);
    if (!g_world && !g_boot_failed)
        g_boot_failed = !boot_locked();
    World* w = g_world;
    pthread_mutex_unlock(&g_boot_lock);
    return w ? w->ddev : nullptr;
}

void attach_thread() {
    if (kshim::current())
        return;
    t_client.task = host_task_attach("client");
}

bool g_device_up = false;

bool device_booted() {
    return __atomic_load_n(&g_world, __ATOMIC_ACQUIRE) != nullptr;
}

void device_exit_handler(void*) {
    atexit_shutdown();
}

long long monotonic_offset_ns() {
    return g_world ? g_world->mono_offset : 0;
}

void device_shutdown() {
    pthread_mutex_lock(&g_boot_lock);
    World* w = g_world;
    g_world = nullptr;
    __atomic_store_n(&g_device_up, false, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_boot_lock);
    if (!w || w->pid != getpid())
        return;
    // Teardown runs as the runtime's main task, whichever thread exits.
    kshim::Task* was = kshim::current();
    kshim::set_current(w->host->rt().main_task());
    files_release_all();
    report_gpu_at_exit(*w->host, w->faults);
    // The host's end-of-run checks; the world's runtime goes with them (writing UPANTHOR_TRACE).
    // A release still finishing on another thread gets the real-mode grace period to land.
    upanthor::host::CheckOptions checks;
    checks.drain_limit = kshim::NSEC_PER_SEC;
    const std::vector<upanthor::host::Problem> problems = w->host->finish(checks);
#if KSHIM_DEBUG_CHECKS
    for (const upanthor::host::Problem& p : problems) {
        if (p.kind == upanthor::host::Problem::Kind::Leak)
            std::fprintf(stderr, "libupanthor_preload: leaked at exit:\n%s\n",
                         p.text.substr(p.text.find('\n') + 1).c_str());
        else
            std::fprintf(stderr, "libupanthor_preload: %s\n", p.text.c_str());
    }
#else
    (void)problems;
#endif
    delete w->host;
    kshim::set_current(was == t_client.task ? was : nullptr);
    delete w;
}

}  // namespace upanthor::preload

// Boot and removal of the driver behind the preload library (device.h), as the driver tests do it
// (tests/panthor/panthor_fixture.cpp) but on the real-thread runtime and for the whole process.
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
#include "drm/drm_mmap.h"
#include "drm/uaccess.h"
#include "kernel_shim/backend.h"
#include "kernel_shim/firmware.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/task.h"
#include "kernel_shim/time.h"
#include "mock_hw/platform.h"
#include "panthor/panthor_device.h"
#include "panthor/panthor_drv.h"
#include "tools/preload/files.h"

namespace upanthor::preload {
namespace {

struct World {
    kshim::Runtime* rt = nullptr;
    mock_hw::MockPlatform* plat = nullptr;
    panthor::panthor_device* ptdev = nullptr;
    kshim::MemCounters before;
    long long mono_offset = 0;
    pid_t pid = 0;  // a forked child has none of the driver's threads: it leaves the driver alone
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
        if (!task) return;
        if (kshim::current() == task) kshim::set_current(nullptr);
        delete task;
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
    if (!__atomic_load_n(&g_world, __ATOMIC_ACQUIRE)) return;
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
    if (const char* l = std::getenv("UPANTHOR_LOG"); l && *l && !std::getenv("KSHIM_LOG")) setenv("KSHIM_LOG", l, 0);
    if (const char* d = std::getenv("UPANTHOR_FIRMWARE_DIR"); d && *d) kshim::firmware_set_search_path(d);
    if (const char* g = std::getenv("UPANTHOR_GPU"); g && *g && std::strcmp(g, "g610") != 0 && std::strcmp(g, "default") != 0) {
        std::fprintf(stderr, "libupanthor_preload: UPANTHOR_GPU=%s: the mock GPU has one configuration (g610)\n", g);
        return false;
    }
    // BOs are mapped into the client from the arena's memfd (interpose.cpp's mmap).
    if (kshim::page_arena_use_memfd() != 0) {
        std::fprintf(stderr, "libupanthor_preload: the page arena exists already without a memfd\n");
        return false;
    }
    // The client's pointers are real: checked against its mappings.
    const char* ua = std::getenv("UPANTHOR_UACCESS");
    drm::uaccess_set_mode(ua && std::strcmp(ua, "vm") == 0 ? drm::UaccessMode::ProcessVm : drm::UaccessMode::FaultFixup);

    auto* w = new World();
    kshim::RuntimeOptions opts;
    opts.mode = kshim::Mode::Real;
    if (const char* t = std::getenv("UPANTHOR_TRACE"); t && *t) {
        opts.trace = true;
        opts.trace_path = t;
    }
    w->before = kshim::mem_counters();
    // The mock GPU's "hardware" runs on host threads: on a loaded host they can be starved past
    // the driver's power-up and AS-command timeouts (tens of ms, real time in this mode), which
    // fails the probe with -ETIMEDOUT as a wedged GPU would. The boot is tried again then.
    constexpr int kBootAttempts = 3;
    for (int attempt = 1;; attempt++) {
        w->rt = new kshim::Runtime(opts);
        // The runtime clock starts at 0; DRM timeouts from the client are on CLOCK_MONOTONIC.
        w->mono_offset = static_cast<long long>(kshim::host_monotonic_ns()) - kshim::ktime_get();
        int ret = panthor::panthor_init();
        if (ret) {
            std::fprintf(stderr, "libupanthor_preload: panthor_init failed: %s\n", std::strerror(-ret));
            return false;
        }
        w->plat = new mock_hw::MockPlatform(mock_hw::GpuConfig{});
        ret = panthor::panthor_probe(w->plat->pdev());
        if (!ret) break;
        delete w->plat;
        panthor::panthor_exit();
        delete w->rt;
        if (ret == -ETIMEDOUT && attempt < kBootAttempts) {
            std::fprintf(stderr, "libupanthor_preload: the boot timed out (host threads of the mock GPU starved?); retrying\n");
            continue;
        }
        std::fprintf(stderr, "libupanthor_preload: panthor_probe failed: %s%s\n", std::strerror(-ret),
                     ret == -ENOENT ? " (no firmware image: build the target upanthor_firmware, or set UPANTHOR_FIRMWARE_DIR)" : "");
        delete w;
        return false;
    }
    w->ptdev = panthor::panthor_from_pdev(w->plat->pdev());
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

drm::Device* device_get() {
    if (World* w = __atomic_load_n(&g_world, __ATOMIC_ACQUIRE)) return &w->ptdev->base;
    pthread_mutex_lock(&g_boot_lock);
    if (!g_world && !g_boot_failed) g_boot_failed = !boot_locked();
    World* w = g_world;
    pthread_mutex_unlock(&g_boot_lock);
    return w ? &w->ptdev->base : nullptr;
}

void attach_thread() {
    if (kshim::current()) return;
    auto* t = new kshim::Task();
    t->name = "client";
    t->kind = kshim::TaskKind::Kthread;
    t->state = kshim::TaskState::Running;
    // Not Backend::next_task_id(): the real backend calls it under its own task lock. Client
    // threads number from a range of their own (trace tracks).
    static std::atomic<kshim::u32> next_client_id{1u << 20};
    t->id = next_client_id.fetch_add(1, std::memory_order_relaxed);
    kshim::init_task_cputime(t);
    t->cpu.clock = kshim::this_thread_cpu_clock();
    t->cpu.start_ns = kshim::clock_ns(t->cpu.clock);
    t_client.task = t;
    kshim::set_current(t);
}

bool g_device_up = false;

bool device_booted() { return __atomic_load_n(&g_world, __ATOMIC_ACQUIRE) != nullptr; }

void device_exit_handler(void*) { atexit_shutdown(); }

long long monotonic_offset_ns() { return g_world ? g_world->mono_offset : 0; }

void device_shutdown() {
    pthread_mutex_lock(&g_boot_lock);
    World* w = g_world;
    g_world = nullptr;
    __atomic_store_n(&g_device_up, false, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_boot_lock);
    if (!w || w->pid != getpid()) return;
    // Teardown runs as the runtime's main task, whichever thread exits.
    kshim::Task* was = kshim::current();
    kshim::set_current(w->rt->main_task());
    files_release_all();
    panthor::panthor_remove(w->plat->pdev());
    delete w->plat;
    panthor::panthor_exit();
    w->rt->run_until_idle(kshim::NSEC_PER_SEC);
#if KSHIM_DEBUG_CHECKS
    // A release still finishing on another thread (seen once under CI load: objects counted live
    // at the first look) gets up to a second to land before a leak is reported.
    std::string leaks = kshim::mem_counters_diff(w->before, kshim::mem_counters());
    for (int i = 0; i < 100 && !leaks.empty(); i++) {
        w->rt->advance(10 * kshim::NSEC_PER_MSEC);
        w->rt->run_until_idle(kshim::NSEC_PER_SEC);
        leaks = kshim::mem_counters_diff(w->before, kshim::mem_counters());
    }
    if (!leaks.empty()) std::fprintf(stderr, "libupanthor_preload: leaked at exit:\n%s\n", leaks.c_str());
    if (drm::drm_mmap_live() != 0) std::fprintf(stderr, "libupanthor_preload: %ld mappings left\n", drm::drm_mmap_live());
#endif
    delete w->rt;  // writes UPANTHOR_TRACE
    kshim::set_current(was == t_client.task ? was : nullptr);
    delete w;
}

}  // namespace upanthor::preload

// Mirrors the fdinfo helpers of drivers/gpu/drm/drm_file.c (drm_fdinfo.h).
#include "drm/drm_fdinfo.h"

#include <cstdarg>
#include <cstdio>

#include "drm/drm_device.h"
#include "drm/drm_gem.h"
#include "kernel_shim/dma-buf/dma-resv.h"

namespace drm {

void drm_printer::printf(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    const int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n > 0)
        out.append(buf, static_cast<size_t>(std::min<int>(n, sizeof(buf) - 1)));
}

void drm_fdinfo_print_size(drm_printer* p, const char* prefix, const char* stat, const char* region, u64 sz) {
    static const char* const units[] = {"", " KiB", " MiB"};
    unsigned u;
    for (u = 0; u < 2; u++) {
        if (sz == 0 || sz % 1024)
            break;
        sz /= 1024;
    }
    p->printf("%s-%s-%s:\t%llu%s\n", prefix, stat, region, static_cast<unsigned long long>(sz), units[u]);
}

void drm_print_memory_stats(drm_printer* p, const drm_memory_stats* stats, unsigned supported_status,
                            const char* region) {
    const char* prefix = "drm";
    drm_fdinfo_print_size(p, prefix, "total", region, stats->_private + stats->shared);
    drm_fdinfo_print_size(p, prefix, "shared", region, stats->shared);
    if (supported_status & DRM_GEM_OBJECT_ACTIVE)
        drm_fdinfo_print_size(p, prefix, "active", region, stats->active);
    if (supported_status & DRM_GEM_OBJECT_RESIDENT)
        drm_fdinfo_print_size(p, prefix, "resident", region, stats->resident);
    if (supported_status & DRM_GEM_OBJECT_PURGEABLE)
        drm_fdinfo_print_size(p, prefix, "purgeable", region, stats->purgeable);
}

void drm_show_memory_stats(drm_printer* p, drm_file* file) {
    drm_memory_stats status;
    unsigned supported_status = 0;
    file->gem.for_each([&](u32, drm_gem_object* obj) {
        unsigned s = 0;
        if (obj->funcs && obj->funcs->status) {
            s = obj->funcs->status(obj);
            supported_status |= DRM_GEM_OBJECT_RESIDENT | DRM_GEM_OBJECT_PURGEABLE;
        }
        if (obj->handle_count.load() > 1)
            status.shared += obj->size;
        else
            status._private += obj->size;
        if (s & DRM_GEM_OBJECT_RESIDENT) {
            status.resident += obj->size;
            if (s & DRM_GEM_OBJECT_PURGEABLE)
                status.purgeable += obj->size;
        }
        // Busy: unsignalled fences of any usage on its resv.
        if (!kshim::dma_resv_test_signaled(obj->resv, kshim::DMA_RESV_USAGE_BOOKKEEP)) {
            status.active += obj->size;
            supported_status |= DRM_GEM_OBJECT_ACTIVE;
            if (s & DRM_GEM_OBJECT_PURGEABLE)
                status.purgeable -= obj->size;
        }
    });
    drm_print_memory_stats(p, &status, supported_status, "memory");
}

std::string drm_show_fdinfo(drm_file* file) {
    drm_printer p;
    drm_device* dev = file->dev;
    p.printf("drm-driver:\t%s\n", dev->driver().name);
    p.printf("drm-client-id:\t%llu\n", static_cast<unsigned long long>(file->client_id));
    if (dev->driver().show_fdinfo)
        dev->driver().show_fdinfo(&p, file);
    return p.out;
}

}  // namespace drm

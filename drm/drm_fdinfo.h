// Mirrors drm_show_fdinfo() and the memory-stats helpers of drivers/gpu/drm/drm_file.c: the
// text /proc/<pid>/fdinfo/<fd> shows for a DRM file (Documentation/gpu/drm-usage-stats.rst).
//
// DOC: drm_show_fdinfo() returns what the kernel would print: "drm-driver", "drm-client-id",
// then the driver's show_fdinfo hook (DriverDesc::show_fdinfo), which usually ends with
// drm_show_memory_stats() over the file's GEM handles. Keys are "key:\tvalue" lines.
#pragma once
#include <string>

#include "drm/drm_file.h"

namespace drm {

// drm_printer writing into a string.
struct drm_printer {
    std::string out;
    void printf(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
};

// drm_memory_stats.
struct drm_memory_stats {
    u64 shared = 0, _private = 0, resident = 0, purgeable = 0, active = 0;
};

// "<prefix>-<stat>-<region>:\t<size>[ KiB| MiB]": the largest unit that divides the size.
void drm_fdinfo_print_size(drm_printer* p, const char* prefix, const char* stat, const char* region, u64 sz);
// drm-total/shared/resident/purgeable/active-memory lines for `stats`, as drm_print_memory_stats.
void drm_print_memory_stats(drm_printer* p, const drm_memory_stats* stats, unsigned supported_status,
                            const char* region);
// The GEM objects of the file's handle table, sorted into the stats above.
void drm_show_memory_stats(drm_printer* p, drm_file* file);
// The whole fdinfo text of `file`.
std::string drm_show_fdinfo(drm_file* file);

}  // namespace drm

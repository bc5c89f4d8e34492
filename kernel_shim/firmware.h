// Mirrors include/linux/firmware.h: request_firmware reads `<search path>/<name>` into memory.
// The search path defaults to UPANTHOR_FIRMWARE_PATH from the environment, else the build's
// firmware folder (where the `upanthor_firmware` target writes arm/mali/arch10.8/mali_csffw.bin).
#pragma once
#include <string>

#include "kernel_shim/device.h"
#include "kernel_shim/types.h"

namespace kshim {

struct firmware {
    size_t size = 0;
    const u8* data = nullptr;
};

// 0, -ENOENT (with an error line naming the full path) when the file is missing, -ENOMEM.
int request_firmware(const firmware** fw, const char* name, Device* dev);
void release_firmware(const firmware* fw);

void firmware_set_search_path(const std::string& path);
std::string firmware_search_path();

}  // namespace kshim

// Mirrors drivers/base/firmware_loader/main.c (the direct filesystem load only): the image is
// read from <search path>/<name> into kmalloc'ed memory the driver releases.
#include "kernel_shim/firmware.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "kernel_shim/log.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"

#ifndef KSHIM_FIRMWARE_DIR
#define KSHIM_FIRMWARE_DIR "firmware"
#endif

namespace kshim {
namespace {

std::mutex g_path_lock;  // protects g_path
std::string g_path;      // empty: the default

std::string default_search_path() {
    const char* env = std::getenv("UPANTHOR_FIRMWARE_PATH");
    return (env && *env) ? env : KSHIM_FIRMWARE_DIR;
}

}  // namespace

void firmware_set_search_path(const std::string& path) {
    std::lock_guard g(g_path_lock);
    g_path = path;
}

std::string firmware_search_path() {
    std::lock_guard g(g_path_lock);
    return g_path.empty() ? default_search_path() : g_path;
}

int request_firmware(const firmware** out, const char* name, Device* dev) {
    might_sleep();
    *out = nullptr;
    const std::string path = firmware_search_path() + "/" + name;
    std::error_code ec;
    std::ifstream in;
    if (std::filesystem::is_regular_file(path, ec))
        in.open(path, std::ios::binary);
    if (!in.is_open()) {
        dev_err(dev, "Direct firmware load for %s failed with error %d (path: %s)", name, -ENOENT, path.c_str());
        return -ENOENT;
    }
    in.seekg(0, std::ios::end);
    const std::streamoff end = in.tellg();
    in.seekg(0, std::ios::beg);
    if (end < 0) {
        dev_err(dev, "Direct firmware load for %s failed with error %d (path: %s)", name, -EIO, path.c_str());
        return -EIO;
    }
    const auto size = static_cast<size_t>(end);

    auto* fw = knew<firmware>(GFP_KERNEL);
    if (!fw)
        return -ENOMEM;
    auto* data = static_cast<u8*>(kmalloc(size ? size : 1, GFP_KERNEL));
    if (!data) {
        kdelete(fw);
        return -ENOMEM;
    }
    if (!in.read(reinterpret_cast<char*>(data), static_cast<std::streamsize>(size))) {
        dev_err(dev, "Direct firmware load for %s failed with error %d (path: %s)", name, -EIO, path.c_str());
        kfree(data);
        kdelete(fw);
        return -EIO;
    }
    fw->size = size;
    fw->data = data;
    *out = fw;
    return 0;
}

void release_firmware(const firmware* fw) {
    if (!fw)
        return;
    kfree(fw->data);
    kdelete(const_cast<firmware*>(fw));
}

}  // namespace kshim

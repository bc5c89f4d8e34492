// The fake /dev/dri and sysfs tree (fake_fs.h). Built with the real libc calls (libc_next.h),
// so creating it never re-enters the interposers' device logic.
#include "tools/preload/fake_fs.h"

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <pthread.h>

#include "host/gpu_models.h"
#include "tools/preload/libc_next.h"
#include "tools/preload/remote_client.h"

namespace upanthor::preload {
namespace {

// The temporary folder and the platform device's folder (/sys/devices/platform/<of_device>);
// written once under g_once. Plain arrays: the cleanup runs from the library's destructor, after
// static C++ objects are gone.
char g_root[64];
char g_plat_dir[96];
char g_driver[32];
pid_t g_root_owner = 0;  // a forked child leaves the tree to its parent
pthread_once_t g_once = PTHREAD_ONCE_INIT;
std::atomic<bool> g_ready{false};

void write_file(const std::string& path, const std::string& text) {
    int fd = libc().open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    (void)!write(fd, text.data(), text.size());
    libc().close(fd);
}

// The model whose board the tree describes: the server's in server mode, else UPANTHOR_GPU's. An
// unknown name, or a server that does not answer, gets the default model's board: the boot (or
// the open) fails anyway and says why.
const upanthor::host::GpuModel& served_model() {
    const auto models = upanthor::host::gpu_models();
    if (remote_mode()) {
        const int i = remote_model();
        return i >= 0 && static_cast<size_t>(i) < models.size() ? models[static_cast<size_t>(i)] : models[0];
    }
    const char* name = std::getenv("UPANTHOR_GPU");
    const upanthor::host::GpuModel* m = upanthor::host::find_gpu_model(name && *name ? name : "default");
    return m ? *m : models[0];
}

void make_tree() {
    const upanthor::host::GpuModel& model = served_model();
    char tmpl[] = "/tmp/upanthor-preload-XXXXXX";
    if (!mkdtemp(tmpl)) {
        std::perror("libupanthor_preload: creating the fake device tree");
        return;
    }
    const std::string r = tmpl;
    const std::string dev = std::string(model.of_device);
    const std::string plat_dir = "/sys/devices/platform/" + dev;
    const std::string driver = model.driver->name;
    std::snprintf(g_plat_dir, sizeof(g_plat_dir), "%s", plat_dir.c_str());
    std::snprintf(g_driver, sizeof(g_driver), "%s", driver.c_str());
    const std::string plat = r + plat_dir;
    const std::string dirs[] = {"/dev",
                                "/dev/dri",
                                "/sys",
                                "/sys/dev",
                                "/sys/dev/char",
                                "/sys/class",
                                "/sys/class/drm",
                                "/sys/bus",
                                "/sys/bus/platform",
                                "/sys/bus/platform/drivers",
                                "/sys/bus/platform/drivers/" + driver,
                                "/sys/devices",
                                "/sys/devices/platform",
                                plat_dir};
    for (const std::string& d : dirs)
        mkdir((r + d).c_str(), 0755);
    mkdir((plat + "/drm").c_str(), 0755);
    // The keys of_device_uevent() writes for a DT platform device.
    std::string uevent = "DRIVER=" + driver + "\nOF_NAME=gpu\nOF_FULLNAME=" + std::string(model.of_fullname) + "\n";
    std::string modalias = "MODALIAS=of:NgpuT(null)";
    int n = 0;
    for (std::string_view c : model.of_compatible) {
        if (c.empty())
            continue;
        uevent += "OF_COMPATIBLE_" + std::to_string(n++) + "=" + std::string(c) + "\n";
        modalias += "C" + std::string(c);
    }
    uevent += "OF_COMPATIBLE_N=" + std::to_string(n) + "\n" + modalias + "\n";
    write_file(plat + "/uevent", uevent);
    (void)!symlink("../../../bus/platform", (plat + "/subsystem").c_str());
    (void)!symlink(("../../../bus/platform/drivers/" + driver).c_str(), (plat + "/driver").c_str());
    for (int minor : {kCardMinor, kRenderMinor}) {
        const std::string name = minor == kCardMinor ? "card0" : "renderD128";
        const std::string dir = plat + "/drm/" + name;
        mkdir(dir.c_str(), 0755);
        write_file(dir + "/dev", std::to_string(kDrmMajor) + ":" + std::to_string(minor) + "\n");
        write_file(dir + "/uevent", "MAJOR=" + std::to_string(kDrmMajor) + "\nMINOR=" + std::to_string(minor) +
                                        "\nDEVNAME=dri/" + name + "\nDEVTYPE=drm_minor\n");
        (void)!symlink("../..", (dir + "/device").c_str());
        (void)!symlink("../../../../../class/drm", (dir + "/subsystem").c_str());
        const std::string target = "../../devices/platform/" + dev + "/drm/" + name;
        (void)!symlink(target.c_str(), (r + "/sys/class/drm/" + name).c_str());
        (void)!symlink(target.c_str(),
                       (r + "/sys/dev/char/" + std::to_string(kDrmMajor) + ":" + std::to_string(minor)).c_str());
        write_file(r + "/dev/dri/" + name, "");
    }
    std::snprintf(g_root, sizeof(g_root), "%s", r.c_str());
    g_root_owner = getpid();
    g_ready.store(true, std::memory_order_release);
}

bool starts_with(const char* s, const char* prefix, size_t* n) {
    *n = std::strlen(prefix);
    return std::strncmp(s, prefix, *n) == 0;
}

// True when `path` is `prefix` itself or below it.
bool under(const char* path, const char* prefix) {
    size_t n;
    return starts_with(path, prefix, &n) && (path[n] == '\0' || path[n] == '/');
}

}  // namespace

int node_minor(const char* path) {
    if (!path)
        return -1;
    if (std::strcmp(path, "/dev/dri/renderD128") == 0)
        return kRenderMinor;
    if (std::strcmp(path, "/dev/dri/card0") == 0)
        return kCardMinor;
    return -1;
}

bool is_sw_sync_path(const char* path) {
    return path && (std::strcmp(path, "/dev/sw_sync") == 0 || std::strcmp(path, "/sys/kernel/debug/sync/sw_sync") == 0);
}

void sw_sync_stat(struct stat* st) {
    std::memset(st, 0, sizeof(*st));
    st->st_mode = S_IFCHR | 0600;
    st->st_rdev = makedev(10, 124);  // a dynamic misc minor
    st->st_nlink = 1;
    st->st_ino = 0x73775f73u;
    st->st_dev = makedev(0, 5);
    st->st_blksize = 4096;
}

const char* node_path(int minor) {
    return minor == kCardMinor ? "/dev/dri/card0" : "/dev/dri/renderD128";
}

void node_stat(int minor, struct stat* st) {
    std::memset(st, 0, sizeof(*st));
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = makedev(kDrmMajor, minor);
    st->st_nlink = 1;
    st->st_ino = 0x7570616eu + static_cast<unsigned>(minor);  // stable per node
    st->st_dev = makedev(0, 5);                               // devtmpfs-like
    st->st_blksize = 4096;
}

const char* fake_path(const char* path, char* buf, size_t len) {
    if (!path || path[0] != '/')
        return path;
    // Cheap reject first: everything we serve is under /dev/dri or /sys.
    if (path[1] != 'd' && path[1] != 's')
        return path;
    const bool platform = under(path, "/sys/devices/platform");
    const bool ours = platform || under(path, "/dev/dri") || under(path, "/sys/dev/char/226:0") ||
                      under(path, "/sys/dev/char/226:128") || under(path, "/sys/class/drm");
    if (!ours)
        return path;
    // The platform device's folder depends on the model, known once the tree exists.
    if (!g_ready.load(std::memory_order_acquire))
        pthread_once(&g_once, make_tree);
    if (!g_root[0] || (platform && !under(path, g_plat_dir)))
        return path;
    if (std::snprintf(buf, len, "%s%s", g_root, path) >= static_cast<int>(len))
        return path;
    return buf;
}

void fake_fs_cleanup() {
    if (!g_ready.load(std::memory_order_acquire))
        return;
    // Only what make_tree made, deepest first.
    if (!g_root[0] || getpid() != g_root_owner)
        return;
    const std::string r = g_root;
    const std::string plat = r + g_plat_dir;
    const std::string drv_dir = std::string("/sys/bus/platform/drivers/") + g_driver;
    for (const char* name : {"card0", "renderD128"}) {
        const std::string dir = plat + "/drm/" + name;
        for (const char* f : {"/dev", "/uevent", "/device", "/subsystem"})
            unlink((dir + f).c_str());
        rmdir(dir.c_str());
        unlink((r + "/sys/class/drm/" + name).c_str());
        unlink((r + "/dev/dri/" + name).c_str());
    }
    unlink((r + "/sys/dev/char/226:0").c_str());
    unlink((r + "/sys/dev/char/226:128").c_str());
    for (const char* f : {"/uevent", "/subsystem", "/driver"})
        unlink((plat + f).c_str());
    rmdir((plat + "/drm").c_str());
    for (const char* d : {static_cast<const char*>(g_plat_dir), "/sys/devices/platform", "/sys/devices",
                          drv_dir.c_str(), "/sys/bus/platform/drivers", "/sys/bus/platform", "/sys/bus",
                          "/sys/class/drm", "/sys/class", "/sys/dev/char", "/sys/dev", "/sys", "/dev/dri", "/dev", ""})
        rmdir((r + d).c_str());
}

}  // namespace upanthor::preload

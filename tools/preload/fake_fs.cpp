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

#include "tools/preload/libc_next.h"

namespace upanthor::preload {
namespace {

// The platform device: the GPU of an RK3588 as the device tree names it.
constexpr const char* kPlatDir = "/sys/devices/platform/fb000000.gpu";

// The temporary folder; written once under g_once. A plain array: the cleanup runs from the
// library's destructor, after static C++ objects are gone.
char g_root[64];
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

void make_tree() {
    char tmpl[] = "/tmp/upanthor-preload-XXXXXX";
    if (!mkdtemp(tmpl)) {
        std::perror("libupanthor_preload: creating the fake device tree");
        return;
    }
    const std::string r = tmpl;
    const std::string plat = r + kPlatDir;
    for (const char* d : {"/dev", "/dev/dri", "/sys", "/sys/dev", "/sys/dev/char", "/sys/class", "/sys/class/drm",
                          "/sys/bus", "/sys/bus/platform", "/sys/bus/platform/drivers",
                          "/sys/bus/platform/drivers/panthor", "/sys/devices", "/sys/devices/platform", kPlatDir})
        mkdir((r + d).c_str(), 0755);
    mkdir((plat + "/drm").c_str(), 0755);
    write_file(plat + "/uevent",
               "DRIVER=panthor\n"
               "OF_NAME=gpu\n"
               "OF_FULLNAME=/gpu@fb000000\n"
               "OF_COMPATIBLE_0=rockchip,rk3588-mali\n"
               "OF_COMPATIBLE_1=arm,mali-valhall-csf\n"
               "OF_COMPATIBLE_N=2\n"
               "MODALIAS=of:NgpuT(null)Crockchip,rk3588-maliCarm,mali-valhall-csf\n");
    (void)!symlink("../../../bus/platform", (plat + "/subsystem").c_str());
    (void)!symlink("../../../bus/platform/drivers/panthor", (plat + "/driver").c_str());
    for (int minor : {kCardMinor, kRenderMinor}) {
        const std::string name = minor == kCardMinor ? "card0" : "renderD128";
        const std::string dir = plat + "/drm/" + name;
        mkdir(dir.c_str(), 0755);
        write_file(dir + "/dev", std::to_string(kDrmMajor) + ":" + std::to_string(minor) + "\n");
        write_file(dir + "/uevent", "MAJOR=" + std::to_string(kDrmMajor) + "\nMINOR=" + std::to_string(minor) +
                                        "\nDEVNAME=dri/" + name + "\nDEVTYPE=drm_minor\n");
        (void)!symlink("../..", (dir + "/device").c_str());
        (void)!symlink("../../../../../class/drm", (dir + "/subsystem").c_str());
        const std::string target = std::string("../../devices/platform/fb000000.gpu/drm/") + name;
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
    const bool ours = under(path, "/dev/dri") || under(path, "/sys/dev/char/226:0") ||
                      under(path, "/sys/dev/char/226:128") || under(path, "/sys/class/drm") || under(path, kPlatDir);
    if (!ours)
        return path;
    if (!g_ready.load(std::memory_order_acquire))
        pthread_once(&g_once, make_tree);
    if (!g_root[0])
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
    const std::string plat = r + kPlatDir;
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
    for (const char* d : {kPlatDir, "/sys/devices/platform", "/sys/devices", "/sys/bus/platform/drivers/panthor",
                          "/sys/bus/platform/drivers", "/sys/bus/platform", "/sys/bus", "/sys/class/drm", "/sys/class",
                          "/sys/dev/char", "/sys/dev", "/sys", "/dev/dri", "/dev", ""})
        rmdir((r + d).c_str());
}

}  // namespace upanthor::preload

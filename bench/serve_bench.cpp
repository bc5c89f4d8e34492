// An ioctl round trip through `upanthor serve` (docs/preload.md "Two modes"), as a client of the
// server sees it: DRM_IOCTL_VERSION (the struct in, three strings and the struct out: five user copies) and
// DRM_IOCTL_GET_CAP (one struct in and out), each a request on the thread's connection, the
// copies by process_vm_readv/writev in the server. Target <= 20 us (the in-process library's
// VERSION, bench/preload_bench.cpp: <= 2 us).
//
// The binary starts a server of its own (the upanthor program, on a socket in /tmp), re-executes
// itself with libupanthor_preload.so in LD_PRELOAD and UPANTHOR_SERVER set, and stops the server
// when the benchmarks are done.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "uapi/drm/drm.h"

extern "C" int ioctl(int fd, unsigned long request, ...);

namespace {

using namespace drm::uapi;

int open_render() {
    const int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        std::perror("open /dev/dri/renderD128");
    return fd;
}

void BM_ServeVersion(benchmark::State& state) {
    const int fd = open_render();
    if (fd < 0) {
        state.SkipWithError("no device");
        return;
    }
    char name[32], date[32], desc[64];
    for (auto _ : state) {
        drm_version v{};
        v.name_len = sizeof(name);
        v.name = name;
        v.date_len = sizeof(date);
        v.date = date;
        v.desc_len = sizeof(desc);
        v.desc = desc;
        if (ioctl(fd, DRM_IOCTL_VERSION, &v) != 0)
            state.SkipWithError("VERSION failed");
        benchmark::DoNotOptimize(v);
    }
    close(fd);
}
BENCHMARK(BM_ServeVersion);

void BM_ServeGetCap(benchmark::State& state) {
    const int fd = open_render();
    if (fd < 0) {
        state.SkipWithError("no device");
        return;
    }
    for (auto _ : state) {
        drm_get_cap c{};
        c.capability = DRM_CAP_SYNCOBJ;
        if (ioctl(fd, DRM_IOCTL_GET_CAP, &c) != 0)
            state.SkipWithError("GET_CAP failed");
        benchmark::DoNotOptimize(c);
    }
    close(fd);
}
BENCHMARK(BM_ServeGetCap);

// The server: `upanthor serve --socket PATH`, without the library preloaded. Its pid, or -1.
pid_t start_server(const std::string& sock) {
    const pid_t pid = fork();
    if (pid == 0) {
        unsetenv("LD_PRELOAD");
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl(UPANTHOR_BIN, UPANTHOR_BIN, "serve", "--socket", sock.c_str(), static_cast<char*>(nullptr));
        std::perror("exec upanthor serve");
        _exit(127);
    }
    struct stat st {};
    for (int i = 0; i < 600 && stat(sock.c_str(), &st) != 0; i++) {
        if (waitpid(pid, nullptr, WNOHANG) == pid)
            return -1;
        usleep(50000);
    }
    return S_ISSOCK(st.st_mode) ? pid : -1;
}

}  // namespace

int main(int argc, char** argv) {
    const char* pre = std::getenv("LD_PRELOAD");
    if (pre && std::strstr(pre, "libupanthor_preload") && std::getenv("UPANTHOR_SERVER")) {
        benchmark::Initialize(&argc, argv);
        benchmark::RunSpecifiedBenchmarks();
        benchmark::Shutdown();
        return 0;
    }
    const std::string sock = "/tmp/upanthor-serve-bench-" + std::to_string(getpid()) + ".sock";
    const pid_t server = start_server(sock);
    if (server < 0) {
        std::fprintf(stderr, "serve_bench: the server did not come up\n");
        return 1;
    }
    const pid_t child = fork();
    if (child == 0) {
        std::string env = UPANTHOR_PRELOAD_ENV;
        if (pre && *pre)
            env += std::string(" ") + pre;
        setenv("LD_PRELOAD", env.c_str(), 1);
        setenv("UPANTHOR_SERVER", sock.c_str(), 1);
        execv("/proc/self/exe", argv);
        std::perror("re-executing with LD_PRELOAD");
        _exit(1);
    }
    int st = 0;
    waitpid(child, &st, 0);
    kill(server, SIGTERM);
    int sst = 0;
    waitpid(server, &sst, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && WIFEXITED(sst) && WEXITSTATUS(sst) == 0 ? 0 : 1;
}

// `upanthor run --coredump DIR` (coredump_sink.h).
#include "tools/upanthor/coredump_sink.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "kernel_shim/devcoredump.h"

namespace upanthor {

std::unique_ptr<CoredumpSink> CoredumpSink::open(const std::string& dir, std::string* error) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir)) {
        *error = "cannot create the coredump directory '" + dir + "': " + (ec ? ec.message() : "not a directory");
        return nullptr;
    }
    std::unique_ptr<CoredumpSink> sink(new CoredumpSink(dir));
    CoredumpSink* s = sink.get();
    kshim::devcoredump_set_listener([s](kshim::Device* dev) { s->on_dump(dev); });
    return sink;
}

CoredumpSink::~CoredumpSink() {
    kshim::devcoredump_set_listener(nullptr);
}

std::string CoredumpSink::error() const {
    return error_ready_.load(std::memory_order_acquire) ? error_ : std::string();
}

void CoredumpSink::on_dump(kshim::Device* dev) {
    const ssize_t size = kshim::devcd_size(dev);
    if (size < 0)
        return;  // cleared or expired meanwhile
    std::vector<char> data(static_cast<size_t>(size));
    size_t got = 0;
    while (got < data.size()) {
        const ssize_t n = kshim::devcd_read(dev, data.data() + got, static_cast<loff_t>(got), data.size() - got);
        if (n <= 0)
            break;
        got += static_cast<size_t>(n);
    }
    kshim::dev_coredump_clear(dev);
    const unsigned n = written_.load() + 1;
    const std::string path = dir_ + "/coredump-" + std::to_string(n) + ".txt";
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(data.data(), static_cast<std::streamsize>(got));
    f.close();
    if (!f) {
        if (!error_claimed_.exchange(true)) {
            error_ = "cannot write '" + path + "': " + std::strerror(errno);
            error_ready_.store(true, std::memory_order_release);
        }
        return;
    }
    written_.store(n);
}

}  // namespace upanthor

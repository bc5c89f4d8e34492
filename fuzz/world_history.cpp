// (no upstream counterpart) A fuzz_ioctl world's past inputs (world_history.h).
#include "fuzz/world_history.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace upanthor_fuzz {

namespace {
constexpr char kMagic[8] = {'U', 'P', 'H', 'H', 'I', 'S', 'T', '1'};
// The magic, the count, then the bytes in use (header included), for tools that trim the file.
constexpr size_t kCountAt = sizeof kMagic;
constexpr size_t kUsedAt = kCountAt + 4;
constexpr size_t kHeader = kUsedAt + 4;

uint32_t load_u32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
           static_cast<uint32_t>(p[3]) << 24;
}

void store_u32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; ++i)
        p[i] = static_cast<uint8_t>(v >> (8 * i));
}
}  // namespace

std::optional<WorldInputs> parse_world_history(const uint8_t* data, size_t size) {
    if (size < kHeader || std::memcmp(data, kMagic, sizeof kMagic) != 0)
        return std::nullopt;
    const uint32_t count = load_u32(data + kCountAt);
    WorldInputs out;
    size_t off = kHeader;
    for (uint32_t i = 0; i < count; ++i) {
        if (size - off < 4)
            return std::nullopt;
        const uint32_t len = load_u32(data + off);
        off += 4;
        if (size - off < len)
            return std::nullopt;
        out.emplace_back(data + off, data + off + len);
        off += len;
    }
    return out;
}

std::vector<uint8_t> serialize_world_history(const WorldInputs& inputs) {
    std::vector<uint8_t> out(kHeader);
    std::memcpy(out.data(), kMagic, sizeof kMagic);
    store_u32(out.data() + kCountAt, static_cast<uint32_t>(inputs.size()));
    for (const auto& in : inputs) {
        const size_t at = out.size();
        out.resize(at + 4 + in.size());
        store_u32(out.data() + at, static_cast<uint32_t>(in.size()));
        if (!in.empty())
            std::memcpy(out.data() + at + 4, in.data(), in.size());
    }
    store_u32(out.data() + kUsedAt, static_cast<uint32_t>(out.size()));
    return out;
}

WorldHistoryRecorder::WorldHistoryRecorder(std::string path, size_t capacity, size_t max_inputs)
    : path_(std::move(path)), capacity_(capacity < kHeader ? kHeader : capacity), max_inputs_(max_inputs) {
    if (path_.empty()) {
        mem_.resize(capacity_);
        map_ = mem_.data();
    } else {
        const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            throw std::runtime_error("cannot create " + path_ + ": " + std::strerror(errno));
        void* m = MAP_FAILED;
        if (::ftruncate(fd, static_cast<off_t>(capacity_)) == 0)
            m = ::mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        const int err = errno;
        ::close(fd);
        if (m == MAP_FAILED) {
            ::unlink(path_.c_str());
            throw std::runtime_error("cannot map " + path_ + ": " + std::strerror(err));
        }
        map_ = static_cast<uint8_t*>(m);
    }
    std::memcpy(map_, kMagic, sizeof kMagic);
    begin_world();
}

WorldHistoryRecorder::~WorldHistoryRecorder() {
    if (path_.empty())
        return;
    ::munmap(map_, capacity_);
    ::unlink(path_.c_str());
}

void WorldHistoryRecorder::begin_world() {
    store_u32(map_ + kCountAt, 0);
    used_ = kHeader;
    store_u32(map_ + kUsedAt, static_cast<uint32_t>(used_));
}

size_t WorldHistoryRecorder::count() const {
    return load_u32(map_ + kCountAt);
}

bool WorldHistoryRecorder::fits(size_t size) const {
    return count() < max_inputs_ && capacity_ - used_ >= 4 && capacity_ - used_ - 4 >= size;
}

void WorldHistoryRecorder::record(const uint8_t* data, size_t size) {
    if (!fits(size)) {
        begin_world();
        return;
    }
    store_u32(map_ + used_, static_cast<uint32_t>(size));
    if (size)
        std::memcpy(map_ + used_ + 4, data, size);
    used_ += 4 + size;
    store_u32(map_ + kUsedAt, static_cast<uint32_t>(used_));
    // The count last: a process stopped before it leaves the history as it was.
    store_u32(map_ + kCountAt, static_cast<uint32_t>(count() + 1));
}

}  // namespace upanthor_fuzz

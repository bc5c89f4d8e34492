// The mali_csffw.bin firmware image: writer, validating reader, default image (see fw_image.h).
#include "mock_hw/fw_image.h"

#include <cstring>
#include <string>

#include "hw/csf/fw_image_format.h"
#include "kernel_shim/log.h"
#include "mock_hw/mcu_layout.h"

namespace mock_hw {

using namespace panthor;

namespace {

void put32(std::vector<u8>& b, size_t off, u32 v) {
    std::memcpy(b.data() + off, &v, 4);
}
void append(std::vector<u8>& b, const void* p, size_t n) {
    if (!n)
        return;
    const u8* s = static_cast<const u8*>(p);
    b.insert(b.end(), s, s + n);
}
u32 get32(std::span<const u8> b, size_t off) {
    u32 v;
    std::memcpy(&v, b.data() + off, 4);
    return v;
}
size_t align4(size_t x) {
    return (x + 3) & ~size_t{3};
}

}  // namespace

const FwSection* FwImage::find(u32 va_start) const {
    for (const auto& s : sections)
        if (s.va_start == va_start)
            return &s;
    return nullptr;
}

std::vector<u8> write_fw_image(const FwImage& img) {
    std::vector<u8> out(sizeof(panthor_fw_binary_hdr));
    // Blobs go after the entries; their offsets are patched once the entries are laid out.
    struct Patch {
        size_t at;  // offset of the data.start field (data.end follows) or meta_start
        const std::vector<u8>* blob;
        bool build_info;
    };
    std::vector<Patch> patches;
    std::vector<u8> build_info;
    if (img.git_sha) {
        // One string, NUL included, then one copy (appending to the tag's 9 bytes in place made
        // GCC 12 warn about the reallocation, a false -Warray-bounds).
        const std::string text = std::string(BUILD_INFO_GIT_SHA_TAG) + *img.git_sha;
        build_info.assign(text.c_str(), text.c_str() + text.size() + 1);
    }

    for (const auto& s : img.sections) {
        size_t name_len = align4(s.name.size());
        size_t size = 4 + sizeof(panthor_fw_binary_section_entry_hdr) + name_len;
        size_t at = out.size();
        out.resize(at + size, 0);
        put32(out, at, CSF_FW_BINARY_ENTRY_TYPE_IFACE | (static_cast<u32>(size) << 8));
        panthor_fw_binary_section_entry_hdr h{};
        h.flags = s.flags;
        h.va.start = s.va_start;
        h.va.end = s.va_end;
        std::memcpy(out.data() + at + 4, &h, sizeof(h));
        std::memcpy(out.data() + at + 4 + sizeof(h), s.name.data(), s.name.size());
        patches.push_back({at + 4 + offsetof(panthor_fw_binary_section_entry_hdr, data), &s.data, false});
    }
    if (img.git_sha) {
        size_t at = out.size();
        out.resize(at + 4 + sizeof(panthor_fw_build_info_hdr), 0);
        put32(out, at,
              CSF_FW_BINARY_ENTRY_TYPE_BUILD_INFO_METADATA | CSF_FW_BINARY_ENTRY_OPTIONAL |
                  ((4 + sizeof(panthor_fw_build_info_hdr)) << 8));
        patches.push_back({at + 4, &build_info, true});
    }
    for (const auto& o : img.others) {
        size_t size = 4 + align4(o.payload.size());
        size_t at = out.size();
        out.resize(at + size, 0);
        put32(out, at,
              (o.type & 0xFF) | (static_cast<u32>(size) << 8) | (o.optional ? CSF_FW_BINARY_ENTRY_OPTIONAL : 0));
        if (!o.payload.empty())
            std::memcpy(out.data() + at + 4, o.payload.data(), o.payload.size());
    }
    const size_t entries_end = out.size();
    for (const auto& p : patches) {
        size_t start = align4(out.size());
        out.resize(start, 0);
        append(out, p.blob->data(), p.blob->size());
        if (p.build_info) {
            put32(out, p.at, static_cast<u32>(start));
            put32(out, p.at + 4, static_cast<u32>(p.blob->size()));
        } else {
            put32(out, p.at, static_cast<u32>(start));
            put32(out, p.at + 4, static_cast<u32>(start + p.blob->size()));
        }
    }
    (void)entries_end;

    panthor_fw_binary_hdr hdr{};
    hdr.magic = CSF_FW_BINARY_HEADER_MAGIC;
    hdr.minor = img.minor;
    hdr.major = img.major;
    hdr.version_hash = img.version_hash;
    // Entries are parsed while offset < size: the size covers the entries only, so the blobs
    // after them are not mistaken for entries.
    hdr.size = static_cast<u32>(entries_end);
    std::memcpy(out.data(), &hdr, sizeof(hdr));
    return out;
}

int parse_fw_image(std::span<const u8> bytes, FwImage* out) {
    FwImage img;
    if (bytes.size() < sizeof(panthor_fw_binary_hdr))
        return -EINVAL;
    panthor_fw_binary_hdr hdr;
    std::memcpy(&hdr, bytes.data(), sizeof(hdr));
    if (hdr.magic != CSF_FW_BINARY_HEADER_MAGIC)
        return -EINVAL;
    if (hdr.major > CSF_FW_BINARY_HEADER_MAJOR_MAX)
        return -EINVAL;
    if (hdr.size > bytes.size())
        return -EINVAL;
    img.minor = hdr.minor;
    img.major = hdr.major;
    img.version_hash = hdr.version_hash;

    size_t off = sizeof(hdr);
    while (off < hdr.size) {
        if (off + 4 > hdr.size)
            return -EINVAL;
        const u32 ehdr = get32(bytes, off);
        const u32 esize = CSF_FW_BINARY_ENTRY_SIZE(ehdr);
        if (esize < 4 || (esize % 4) != 0 || off + esize > hdr.size)
            return -EINVAL;
        std::span<const u8> payload = bytes.subspan(off + 4, esize - 4);
        const u32 type = CSF_FW_BINARY_ENTRY_TYPE(ehdr);
        switch (type) {
        case CSF_FW_BINARY_ENTRY_TYPE_IFACE: {
            panthor_fw_binary_section_entry_hdr h;
            if (payload.size() < sizeof(h))
                return -EINVAL;
            std::memcpy(&h, payload.data(), sizeof(h));
            if (h.flags & ~CSF_FW_BINARY_IFACE_ENTRY_SUPPORTED_FLAGS)
                return -EINVAL;
            if (h.data.end < h.data.start || h.va.end < h.va.start)
                return -EINVAL;
            if (h.data.end > bytes.size())
                return -EINVAL;
            if ((h.va.start & 0xFFF) || (h.va.end & 0xFFF))
                return -EINVAL;
            if (h.flags & CSF_FW_BINARY_IFACE_ENTRY_PROT) {
                pr_warn("mock_hw: firmware protected-mode section ignored");
                break;
            }
            FwSection s;
            s.flags = h.flags;
            s.va_start = h.va.start;
            s.va_end = h.va.end;
            s.data.assign(bytes.begin() + h.data.start, bytes.begin() + h.data.end);
            std::string name(reinterpret_cast<const char*>(payload.data() + sizeof(h)), payload.size() - sizeof(h));
            while (!name.empty() && name.back() == '\0')
                name.pop_back();
            s.name = std::move(name);
            img.sections.push_back(std::move(s));
            break;
        }
        case CSF_FW_BINARY_ENTRY_TYPE_BUILD_INFO_METADATA: {
            // Inconsistencies here are not fatal in panthor either.
            if (payload.size() < sizeof(panthor_fw_build_info_hdr))
                break;
            panthor_fw_build_info_hdr b;
            std::memcpy(&b, payload.data(), sizeof(b));
            if (b.meta_size < 10 || u64{b.meta_start} + b.meta_size > bytes.size())
                break;
            const char* meta = reinterpret_cast<const char*>(bytes.data() + b.meta_start);
            if (std::memcmp(meta, BUILD_INFO_GIT_SHA_TAG, 9) != 0 || meta[b.meta_size - 1] != '\0')
                break;
            img.git_sha = std::string(meta + 9);
            break;
        }
        case CSF_FW_BINARY_ENTRY_TYPE_CONFIG:
        case CSF_FW_BINARY_ENTRY_TYPE_FUTF_TEST:
        case CSF_FW_BINARY_ENTRY_TYPE_TRACE_BUFFER:
        case CSF_FW_BINARY_ENTRY_TYPE_TIMELINE_METADATA:
            img.others.push_back({type, (ehdr & CSF_FW_BINARY_ENTRY_OPTIONAL) != 0, {payload.begin(), payload.end()}});
            break;
        default:
            if (!(ehdr & CSF_FW_BINARY_ENTRY_OPTIONAL))
                return -EINVAL;
            img.others.push_back({type, true, {payload.begin(), payload.end()}});
            break;
        }
        off += esize;
    }
    if (!img.find(CSF_MCU_SHARED_REGION_START)) {
        pr_err("mock_hw: Shared interface region not found");
        return -EINVAL;
    }
    *out = std::move(img);
    return 0;
}

FwImage default_fw_image(const McuConfig& mcu) {
    FwImage img;
    img.minor = 1;
    img.version_hash = 0x75706e74;  // "upnt"
    img.git_sha = "upanthor-mock-fw-1";

    FwSection code;
    code.name = ".text";
    code.flags =
        CSF_FW_BINARY_IFACE_ENTRY_RD | CSF_FW_BINARY_IFACE_ENTRY_EX | CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_CACHED;
    code.va_start = kMockFwCodeVa;
    code.va_end = kMockFwCodeVa + 0x10000;
    MockFwHeader h{kMockFwMagic, kMockFwAbi, mcu.group_num, mcu.stream_num};
    code.data.resize(0x1000, 0);
    std::memcpy(code.data.data(), &h, sizeof(h));
    img.sections.push_back(std::move(code));

    FwSection data;
    data.name = ".data";
    data.flags = CSF_FW_BINARY_IFACE_ENTRY_RD | CSF_FW_BINARY_IFACE_ENTRY_WR |
                 CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_CACHED | CSF_FW_BINARY_IFACE_ENTRY_ZERO;
    data.va_start = kMockFwDataVa;
    data.va_end = kMockFwDataVa + 0x1000;
    img.sections.push_back(std::move(data));

    McuLayout layout{mcu.group_num, mcu.stream_num};
    FwSection shared;
    shared.name = ".shared";
    shared.flags = CSF_FW_BINARY_IFACE_ENTRY_RD | CSF_FW_BINARY_IFACE_ENTRY_WR |
                   CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_NONE | CSF_FW_BINARY_IFACE_ENTRY_SHARED |
                   CSF_FW_BINARY_IFACE_ENTRY_ZERO;
    shared.va_start = CSF_MCU_SHARED_REGION_START;
    shared.va_end = CSF_MCU_SHARED_REGION_START + McuLayout::align(layout.required_size(), 0x10000);
    img.sections.push_back(std::move(shared));
    return img;
}

}  // namespace mock_hw

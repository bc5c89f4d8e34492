// (no upstream counterpart) fuzz_ioctl's buffer-object ops (fuzz/ioctl_ops.h, family Bo):
// GEM_CLOSE, panthor's BO_CREATE and BO_MMAP_OFFSET, mmap/munmap of a DRM file (BO offsets or
// the MMIO ones), and CPU writes of command-stream words through a mapping, made loop-free
// (cs_sanitize_word) so that no stream the CPU wrote can hang the host.
#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "fuzz/ioctl_program.h"
#include "hw/csf/cs_isa.h"
#include "hw/csf/mock_fw_formats.h"
#include "uapi/drm/drm.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

void IoctlProgram::op_gem_close(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_gem_close a{};
    a.handle = pick(bos_);
    a.pad = in_.u8() < 250 ? 0 : 1;
    ioctl(f, DRM_IOCTL_GEM_CLOSE, a, "GEM_CLOSE");
}

void IoctlProgram::op_bo_create(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    const int fi = c.file_idx;
    drm_panthor_bo_create a{};
    a.size = in_.u8() < 200 ? 0x1000 * (1 + in_.u8() % 64) : in_.edge_u64();
    // Pinning a BO allocates (and zeroes) all of it, page by page until the arena runs
    // out: sizes whose page array drm_gem_get_pages can allocate (up to 1 TiB: INT_MAX
    // bytes of page pointers) are cut to kIoctlMaxHostBytes; larger ones fail at once.
    if (a.size > kIoctlMaxHostBytes && a.size < (u64{1} << 40))
        a.size = kIoctlMaxHostBytes;
    a.flags = in_.pick<u32>({0, 0, DRM_PANTHOR_BO_NO_MMAP, in_.edge_u32(), DRM_PANTHOR_BO_WB_MMAP,
                             DRM_PANTHOR_BO_NO_MMAP | DRM_PANTHOR_BO_WB_MMAP});
    a.exclusive_vm_id = in_.u8() < 180 ? 0 : pick(vms_);
    a.pad = in_.u8() < 250 ? 0 : 1;
    if (!ioctl(f, DRM_IOCTL_PANTHOR_BO_CREATE, a, "BO_CREATE"))
        bos_.push_back({fi, a.handle});
}

void IoctlProgram::op_bo_mmap_offset(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_panthor_bo_mmap_offset a{};
    a.handle = pick(bos_);
    a.pad = in_.u8() < 250 ? 0 : 1;
    if (!ioctl(f, DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, a, "BO_MMAP_OFFSET") && offsets_.size() < 32)
        offsets_.push_back(a.offset);
}

void IoctlProgram::op_mmap_or_munmap(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    const uint8_t k = in_.u8();
    if (k < 170) {
        u64 off = !offsets_.empty() && k < 150 ? offsets_[k % offsets_.size()]
                                               : in_.pick<u64>({DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET,
                                                                DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, in_.edge_u64()});
        const size_t len = in_.u8() < 220 ? 0x1000 * (1 + in_.u8() % 4) : in_.edge_u64();
        const int prot = in_.u8() < 230 ? (PROT_READ | PROT_WRITE) : static_cast<int>(in_.u8());
        const int flags = in_.u8() < 230 ? MAP_SHARED : in_.pick<int>({MAP_PRIVATE, 0, MAP_SHARED | MAP_PRIVATE});
        drm::VmArea* vma = nullptr;
        const int ret = drm::drm_mmap(f, off, len, prot, flags, &vma);
        note("mmap", ret);
        if (!ret && vma) {
            vmas_.push_back(vma);
            if (!vma->addr)
                drm::vma_read32(vma, 0);
        }
    } else if (!vmas_.empty()) {
        const size_t i = in_.below(static_cast<u32>(vmas_.size()));
        drm::drm_munmap(vmas_[i]);
        vmas_.erase(vmas_.begin() + static_cast<long>(i));
        note("munmap", 0);
    }
}

void IoctlProgram::op_cpu_write(const IoctlOpCall&) {
    // Command-stream words (or data) written by the CPU through a mapping.
    std::vector<drm::VmArea*> mem;
    for (drm::VmArea* v : vmas_)
        if (v->addr)
            mem.push_back(v);
    if (mem.empty())
        return;
    drm::VmArea* v = mem[in_.below(static_cast<u32>(mem.size()))];
    const size_t words = v->length / 8;
    size_t at = (in_.u16() % words);
    const u32 n = 1 + in_.below(16);
    auto* dst = static_cast<uint64_t*>(v->addr);
    for (u32 i = 0; i < n && at < words; i++, at++) {
        u64 word;
        switch (in_.below(8)) {
        case 0: word = panthor::cs::move48(static_cast<uint8_t>(in_.below(96)), pick_va()); break;
        case 1: word = panthor::cs::move32(static_cast<uint8_t>(in_.below(96)), in_.edge_u32()); break;
        case 2:
            word = panthor::cs::store_multiple(static_cast<uint8_t>(in_.below(96)),
                                               static_cast<uint8_t>(in_.below(96) & ~1u), in_.u16());
            break;
        case 3:
            word = panthor::cs::sync_add64(static_cast<uint8_t>(in_.below(96) & ~1u),
                                           static_cast<uint8_t>(in_.below(96) & ~1u));
            break;
        case 4: word = panthor::cs::run_compute(1); break;
        case 5: {  // a mock shader descriptor (8 words) instead
            mock_hw::MockShader sh;
            sh.kind = in_.below(mock_hw::MockShader::kLastKind + 2);
            sh.duration_ns = kshim::NSEC_PER_USEC * in_.u8();
            sh.addr = pick_va();
            sh.value = in_.edge_u64();
            if (at + sizeof(sh) / 8 <= words) {
                std::memcpy(dst + at, &sh, sizeof(sh));
                at += sizeof(sh) / 8 - 1;
            }
            continue;
        }
        default: word = in_.u64(); break;
        }
        dst[at] = cs_sanitize_word(word);
    }
    note("cpu_write", 0);
}

}  // namespace upanthor_fuzz

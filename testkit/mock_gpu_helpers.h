// Helpers for driving the mock GPU without the driver (tests, benchmarks): a "driver" that writes registers the way panthor
// does, hand-built LPAE page tables in the physical arena, and a firmware loader that maps the
// image's sections into AS 0 like panthor_fw_load does.
#pragma once
#include <cstring>
#include <memory>
#include <vector>

#include "hw/csf/fw_iface.h"
#include "hw/csf/fw_image_format.h"
#include "hw/csf/regs/csf_regs.h"
#include "hw/csf/regs/gpu_regs.h"
#include "hw/csf/regs/job_regs.h"
#include "hw/csf/regs/mmu_regs.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/runtime.h"
#include "mock_hw/fw_image.h"
#include "mock_hw/gpu.h"

namespace mock_hw::testing {

using namespace panthor;
using kshim::NSEC_PER_MSEC;
using kshim::NSEC_PER_USEC;

// Contiguous zeroed pages in the arena.
class PhysPages {
public:
    explicit PhysPages(size_t bytes) {
        while ((kshim::PAGE_SIZE << order_) < bytes)
            order_++;
        page_ = kshim::alloc_pages(kshim::GFP_KERNEL | kshim::__GFP_ZERO, order_);
    }
    ~PhysPages() { kshim::__free_pages(page_, order_); }
    PhysPages(const PhysPages&) = delete;
    PhysPages& operator=(const PhysPages&) = delete;
    u64 pa() const { return kshim::page_to_phys(page_); }
    u8* ptr() const { return static_cast<u8*>(kshim::page_address(page_)); }
    size_t size() const { return kshim::PAGE_SIZE << order_; }

private:
    unsigned order_ = 0;
    kshim::Page* page_ = nullptr;
};

// Descriptor bits (VMSAv8-64 stage 1, as io-pgtable ARM_64_LPAE_S1 writes them).
inline constexpr u64 kPteValid = 1;
inline constexpr u64 kPteTable = 3;  // also "page" at level 3
inline constexpr u64 kPteBlock = 1;
inline constexpr u64 kPteAttrCached = 1ull << 2;  // AttrIndx 1
inline constexpr u64 kPteApUnpriv = 1ull << 6;
inline constexpr u64 kPteApRdonly = 1ull << 7;
inline constexpr u64 kPteShIs = 3ull << 8;
inline constexpr u64 kPteAf = 1ull << 10;
inline constexpr u64 kPteNg = 1ull << 11;
inline constexpr u64 kPteXn = 3ull << 53;
inline constexpr u64 kPteRw = kPteAttrCached | kPteApUnpriv | kPteShIs | kPteAf | kPteNg;

inline constexpr u64 kTranscfg48 = 0x420001C6;  // panthor's value for a 48-bit VA
inline constexpr u64 kMemattr = 0x4C4C4C4C8C4C8F4Cull;

// Hand-built 4-level tables (48-bit VA, 4 KiB granule). Table descriptors (type 3) are the same
// in the Mali-LPAE format, so testkit/jm_gpu_helpers.h builds on slot().
class PageTables {
public:
    PageTables() { root_ = new_table(); }
    u64 root_pa() const { return root_; }

    // The descriptor slot for `va` at `level`, creating the tables above it.
    u64* slot(u64 va, int level) {
        u64 table = root_;
        for (int l = 0;; l++) {
            u64* e = static_cast<u64*>(kshim::phys_to_virt(table)) + ((va >> (39 - 9 * l)) & 0x1FF);
            if (l == level)
                return e;
            if ((*e & 3) != 3)
                *e = new_table() | kPteTable;
            table = *e & 0x0000FFFFFFFFF000ull;
        }
    }
    void map_page(u64 va, u64 pa, u64 attrs = kPteRw) { *slot(va, 3) = pa | attrs | kPteTable; }
    void map_block_2m(u64 va, u64 pa, u64 attrs = kPteRw) { *slot(va, 2) = pa | attrs | kPteBlock; }
    // Creates the intermediate tables for [va, va + size) (allocation; outside any spinlock).
    void prealloc(u64 va, u64 size) {
        for (u64 o = 0; o < size; o += 0x1000)
            slot(va + o, 3);
    }
    void map_range(u64 va, u64 pa, u64 size, u64 attrs = kPteRw) {
        for (u64 o = 0; o < size; o += 0x1000)
            map_page(va + o, pa + o, attrs);
    }

private:
    u64 new_table() {
        pages_.push_back(std::make_unique<PhysPages>(0x1000));
        return pages_.back()->pa();
    }
    u64 root_ = 0;
    std::vector<std::unique_ptr<PhysPages>> pages_;
};

// Register access the way the drivers do it (64-bit: LO then HI; counters: HI, LO, HI), on any
// mock GPU.
template <class G>
struct GpuDrv {
    G& g;
    u32 r(u32 off) { return g.read32(off); }
    void w(u32 off, u32 v) { g.write32(off, v); }
    u64 r64(u32 off) { return r(off) | (u64{r(off + 4)} << 32); }
    void w64(u32 off, u64 v) {
        w(off, static_cast<u32>(v));
        w(off + 4, static_cast<u32>(v >> 32));
    }
    u64 read_counter(u32 off) {
        u32 hi1, lo, hi2;
        do {
            hi1 = r(off + 4);
            lo = r(off);
            hi2 = r(off + 4);
        } while (hi1 != hi2);
        return (u64{hi2} << 32) | lo;
    }
};
using Drv = GpuDrv<Gpu>;

// panthor_mmu_as_enable: program TRANSTAB/MEMATTR/TRANSCFG and UPDATE, waiting for AS_ACTIVE to
// clear before and after; `wait` runs the world until its predicate holds (false on timeout).
using WaitFn = std::function<bool(const std::function<bool()>&)>;
inline bool as_enable(Drv& d, u32 as, u64 transtab, const WaitFn& wait, u64 transcfg = kTranscfg48,
                      u64 memattr = kMemattr) {
    auto idle = [&] { return !(d.r(AS_STATUS(as)) & AS_STATUS_AS_ACTIVE); };
    if (!wait(idle))
        return false;
    d.w64(AS_TRANSTAB(as), transtab);
    d.w64(AS_MEMATTR(as), memattr);
    d.w64(AS_TRANSCFG(as), transcfg);
    d.w(AS_COMMAND(as), AS_COMMAND_UPDATE);
    return wait(idle);
}

// Loads a firmware image the way panthor_fw_load does: one contiguous allocation per section,
// initial contents copied (rest zero), mapped at va.start in AS 0's tables with RO/XN from the
// flags. The host keeps a CPU pointer to every section (panthor vmaps the shared one).
class FwLoader {
public:
    explicit FwLoader(const FwImage& img) {
        for (const auto& s : img.sections) {
            auto p = std::make_unique<PhysPages>(s.va_end - s.va_start);
            if (!s.data.empty())
                std::memcpy(p->ptr(), s.data.data(), std::min<size_t>(s.data.size(), s.va_end - s.va_start));
            u64 attrs = kPteApUnpriv | kPteAf | kPteNg | kPteShIs;
            if (!(s.flags & CSF_FW_BINARY_IFACE_ENTRY_WR))
                attrs |= kPteApRdonly;
            if (!(s.flags & CSF_FW_BINARY_IFACE_ENTRY_EX))
                attrs |= kPteXn;
            if ((s.flags & CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_MASK) == CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_CACHED)
                attrs |= kPteAttrCached;
            pt.map_range(s.va_start, p->pa(), s.va_end - s.va_start, attrs);
            sections.push_back({s.va_start, s.va_end, std::move(p)});
        }
    }
    // CPU pointer for an MCU VA inside a loaded section.
    template <typename T = u8>
    T* host(u32 mcu_va) {
        for (auto& s : sections)
            if (mcu_va >= s.va_start && mcu_va < s.va_end)
                return reinterpret_cast<T*>(s.mem->ptr() + (mcu_va - s.va_start));
        return nullptr;
    }
    // A slow reset re-copies the sections from the image (panthor_reload_fw_sections).
    void reload(const FwImage& img) {
        for (size_t i = 0; i < img.sections.size(); i++) {
            auto& s = sections[i];
            std::memset(s.mem->ptr(), 0, s.mem->size());
            if (!img.sections[i].data.empty())
                std::memcpy(s.mem->ptr(), img.sections[i].data.data(), img.sections[i].data.size());
        }
    }

    struct Loaded {
        u32 va_start, va_end;
        std::unique_ptr<PhysPages> mem;
    };
    PageTables pt;
    std::vector<Loaded> sections;
};

}  // namespace mock_hw::testing

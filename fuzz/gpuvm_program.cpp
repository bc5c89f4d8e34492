// (no upstream counterpart) fuzz_gpuvm's decoder and executor (gpuvm_program.h).
#include "fuzz/gpuvm_program.h"

#include <algorithm>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "kernel_shim/iommu/io_pgtable.h"
#include "testkit/gpuvm_harness.h"
#include "testkit/gpuvm_model.h"

namespace upanthor_fuzz {

using gpuvm_test::kPage;
using gpuvm_test::Model;
using kshim::u64;

namespace {

constexpr u64 kSpacePages = 1024;  // small, so ops collide
constexpr u64 kBoPages = 128;
constexpr int kBos = 3;
constexpr int kMaxOps = 256;
// A made-up physical address of page `off` of BO `bo`: the page table only stores numbers.
u64 bo_phys(int bo, u64 off) {
    return 0x100000000ull + u64(bo) * 0x10000000ull + off * kPage;
}

std::string describe(const char* what, int step, u64 page) {
    return std::string(what) + " after op " + std::to_string(step) + " at page " + std::to_string(page) + "\n";
}

}  // namespace

std::string run_gpuvm_program(PanthorWorld& world, const uint8_t* data, size_t size) {
    world.mark();
    FuzzInput in(data, size);
    std::string problem;
    std::vector<drm::drm_gem_object*> bos;
    for (int i = 0; i < kBos; i++)
        bos.push_back(gpuvm_test::new_bo(kBoPages * kPage));
    iommu::IoPgtableCfg cfg;
    cfg.pgsize_bitmap = iommu::SZ_4K | iommu::SZ_2M | iommu::SZ_1G;
    cfg.ias = 48;
    cfg.oas = 40;
    iommu::IoPgtableOps* pgt = iommu::alloc_io_pgtable_ops(iommu::IoPgtableFmt::ARM_64_LPAE_S1, &cfg, nullptr);
    Model model;
    {
        gpuvm_test::TestVm vm(drm::DRM_GPUVM_IMMEDIATE_MODE, 0, kSpacePages * kPage);
        // The page table follows the model: unmap what [s, e) held, map the new range.
        auto pgt_unmap = [&](u64 s, u64 e) {
            auto it = model.lower_bound(s);
            if (it != model.begin() && std::prev(it)->second.end > s)
                --it;
            for (; it != model.end() && it->first < e; ++it) {
                const u64 a = std::max(it->first, s), b = std::min(it->second.end, e);
                if (pgt->unmap_pages(a * kPage, kPage, b - a, nullptr) != (b - a) * kPage)
                    problem += describe("io-pgtable unmapped less than was mapped", -1, a);
            }
        };
        auto compare = [&](int step, u64 lo, u64 hi) {
            Model seen;
            drm::drm_gpuvm_for_each_va(vm.vm(), [&](drm::drm_gpuva* va) {
                if (va == &vm.vm()->kernel_alloc_node)
                    return;
                int bo = -1;
                for (int i = 0; i < kBos; i++)
                    if (bos[i] == va->gem.obj)
                        bo = i;
                seen[va->va.addr / kPage] = {(va->va.addr + va->va.range) / kPage, bo, va->gem.offset / kPage};
            });
            if (seen.size() != model.size())
                return problem += describe("gpuvm and model differ in mapping count", step, 0), false;
            for (auto& [s, mm] : model) {
                auto it = seen.find(s);
                if (it == seen.end() || it->second.end != mm.end || it->second.bo != mm.bo ||
                    it->second.offset != mm.offset)
                    return problem += describe("gpuvm and model differ", step, s), false;
            }
            for (u64 p = lo; p < hi && p < kSpacePages; p++) {
                auto it = model.upper_bound(p);
                u64 want = 0;
                if (it != model.begin() && std::prev(it)->second.end > p) {
                    const auto& [start, mm] = *std::prev(it);
                    want = bo_phys(mm.bo, mm.offset + (p - start));
                }
                if (pgt->iova_to_phys(p * kPage) != want)
                    return problem += describe("io-pgtable and model differ", step, p), false;
            }
            return true;
        };
        const int nops = 1 + static_cast<int>(in.below(kMaxOps));
        for (int step = 0; step < nops && problem.empty() && !in.empty(); step++) {
            const uint8_t kind = in.u8();
            if (kind >= 240) {  // an invalid request: refused, nothing changes
                u64 addr = 0, range = 0;
                switch (kind & 3) {
                case 0:
                    addr = kPage * in.below(kSpacePages);
                    range = 0;
                    break;
                case 1:
                    addr = ~u64{0} - kPage * in.u8();
                    range = kPage * (1 + in.u8());
                    break;
                case 2:
                    addr = kPage * (kSpacePages - in.below(4));
                    range = kPage * (8 + in.u8());
                    break;
                default:
                    addr = kPage * in.below(kSpacePages);
                    range = ~u64{0} - in.u8();
                    break;
                }
                const int ret = (kind & 4) ? vm.unmap(addr, range) : vm.map(addr, range, bos[0], 0);
                if (ret != -EINVAL)
                    problem += "invalid request (addr " + std::to_string(addr) + " range " + std::to_string(range) +
                               ") returned " + std::to_string(ret) + " at op " + std::to_string(step) + "\n";
                continue;
            }
            const u64 len = 1 + in.below(48);
            const u64 s = in.u16() % (kSpacePages - len + 1);
            if (kind < 150) {
                const int bo = static_cast<int>(in.below(kBos));
                // Offsets that continue a neighbour are frequent, so merges and "keep" get exercised.
                const u64 off =
                    in.flag() ? (s % (kBoPages - len + 1)) : in.below(static_cast<uint32_t>(kBoPages - len + 1));
                const int ret = vm.map(s * kPage, len * kPage, bos[bo], off * kPage);
                if (ret) {
                    problem += "map returned " + std::to_string(ret) + " at op " + std::to_string(step) + "\n";
                    break;
                }
                pgt_unmap(s, s + len);
                gpuvm_test::model_carve(model, s, s + len);
                model[s] = {s + len, bo, off};
                size_t mapped = 0;
                if (pgt->map_pages(s * kPage, bo_phys(bo, off), kPage, len, iommu::IOMMU_READ | iommu::IOMMU_WRITE,
                                   kshim::GFP_KERNEL, &mapped) ||
                    mapped != len * kPage)
                    problem += describe("io-pgtable map failed", step, s);
            } else {
                const int ret = vm.unmap(s * kPage, len * kPage);
                if (ret) {
                    problem += "unmap returned " + std::to_string(ret) + " at op " + std::to_string(step) + "\n";
                    break;
                }
                pgt_unmap(s, s + len);
                gpuvm_test::model_carve(model, s, s + len);
            }
            compare(step, s > 0 ? s - 1 : 0, s + len + 1);
        }
        if (problem.empty())
            compare(-1, 0, kSpacePages);
        pgt_unmap(0, kSpacePages);
    }
    iommu::free_io_pgtable_ops(pgt);
    for (drm::drm_gem_object* bo : bos)
        drm::drm_gem_object_put(bo);
    return problem + world.check();
}

}  // namespace upanthor_fuzz

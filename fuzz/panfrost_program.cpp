// (no upstream counterpart) fuzz_panfrost_ioctl's program loop, teardown and checks
// (fuzz/panfrost_ops.h); the op handlers are in fuzz/panfrost_ops_*.cpp.
#include <cstdio>

#include "drm/drm_ioctl.h"
#include "fuzz/panfrost_ops.h"
#include "kernel_shim/fault_inject.h"

namespace upanthor_fuzz {

namespace {
// Every out fence must have signalled this long (virtual time) after the files closed: closing
// a file hard-stops its jobs, so this is a bound on the driver, not on the jobs.
constexpr kshim::ktime_t kSignalBound = 10 * kshim::NSEC_PER_SEC;

// The WARNs upstream gives when an injected allocation failure hits it:
//  - panfrost_mmu_map's WARN_ON on a failed drm_gem_shmem_get_pages_sgt (a BO opened in a VM
//    without its pages);
//  - a page-table allocation failing inside mmu_map_sg, whose map errors upstream ignores: the BO
//    is mapped in part, and unmapping it later meets missing entries, so io-pgtable's unmap WARNs
//    (no IO_PGTABLE_QUIRK_NO_WARN) and so does panfrost_mmu_unmap's size check; and a job that
//    touches the hole takes a translation fault in a BO that is not a heap, which
//    panfrost_mmu_map_fault_addr WARNs about (upstream's dev_WARN).
bool alloc_failure_warn(const kshim::Report& r) {
    if (r.kind != kshim::ReportKind::Warn)
        return false;
    auto at = [&](const char* title, const char* where) {
        return r.title == title && r.detail.find(where) != std::string::npos;
    };
    return at("WARN_ON(ret)", "panfrost_mmu_map") ||
           at("WARN_ON(!(cfg.quirks & IO_PGTABLE_QUIRK_NO_WARN))", "unmap_pages") ||
           at("WARN_ON(unmapped_page != pgsize * pgcount)", "panfrost_mmu_unmap") ||
           at("WARN_ON(true)", "panfrost_mmu_map_fault_addr");
}
}  // namespace

const char* panfrost_op_name(PanfrostOp op) {
    switch (op) {
    case PanfrostOp::CreateBo: return "CREATE_BO";
    case PanfrostOp::CreateJobBo: return "CREATE_BO+MMAP";
    case PanfrostOp::MmapBo: return "MMAP_BO";
    case PanfrostOp::GetParam: return "GET_PARAM";
    case PanfrostOp::GetBoOffset: return "GET_BO_OFFSET";
    case PanfrostOp::WaitBo: return "WAIT_BO";
    case PanfrostOp::Submit:
    case PanfrostOp::Submit2: return "SUBMIT";
    case PanfrostOp::JmCtxCreate: return "JM_CTX_CREATE";
    case PanfrostOp::JmCtxDestroy: return "JM_CTX_DESTROY";
    case PanfrostOp::SyncobjCreate: return "SYNCOBJ_CREATE";
    case PanfrostOp::SyncobjDestroy: return "SYNCOBJ_DESTROY";
    case PanfrostOp::SyncobjWait: return "SYNCOBJ_WAIT";
    case PanfrostOp::GemClose: return "GEM_CLOSE";
    case PanfrostOp::CloseFile: return "CLOSE_FILE";
    case PanfrostOp::Advance: return "ADVANCE";
    case PanfrostOp::Fault: return "FAULT";
    case PanfrostOp::RawIoctl: return "RAW_IOCTL";
    }
    return "?";
}

std::string run_panfrost_program(PanfrostWorld& world, const uint8_t* data, size_t size,
                                 const PanfrostProgramOptions& opts) {
    if (!world.pfdev())
        return "no device\n";
    FuzzInput in(data, size);
    PanfrostProgram p(world, in, opts);
    return p.run();
}

PanfrostProgram::u32 PanfrostProgram::pick_handle(const std::vector<u32>& pool) {
    const uint8_t sel = in_.u8();
    if (!pool.empty() && sel < 224)
        return pool[sel % pool.size()];
    if (sel < 240)
        return 0;
    return in_.edge_u32();
}

void PanfrostProgram::trace(int f, const char* what, const std::string& args, long ret) {
    if (!opts_.trace)
        return;
    char line[256];
    std::snprintf(line, sizeof(line), "%3d f%d %s(%s) = %ld\n", call_, f, what, args.c_str(), ret);
    *opts_.trace += line;
}

void PanfrostProgram::open_file(int f) {
    File& fl = files_[f];
    fl = File{};
    if (w_.machine().open_file(&fl.file))
        fl.file = nullptr;
    else
        fl.ctxs.push_back(0);
}

void PanfrostProgram::close_file(int f) {
    File& fl = files_[f];
    for (auto& bo : fl.job_bos)
        panfrost::testing::pf_job_bo_release(&bo);
    if (fl.file)
        drm::drm_release(fl.file);
    fl = File{};
}

std::string PanfrostProgram::run() {
    const int nfiles = 1 + static_cast<int>(in_.below(kPanfrostMaxFiles));
    for (int f = 0; f < nfiles; f++)
        open_file(f);
    const int calls = 1 + static_cast<int>(in_.below(kPanfrostMaxCalls));
    for (call_ = 0; call_ < calls && !in_.empty(); call_++) {
        const auto op = static_cast<PanfrostOp>(in_.u8() % kPanfrostOpCount);
        const int f = in_.u8() % nfiles;  // always one byte, so programs read alike with 1 or 2 files
        if (!files_[f].file && op != PanfrostOp::CloseFile && op != PanfrostOp::Advance)
            continue;
        switch (op) {
        case PanfrostOp::CreateBo: op_create_bo(f); break;
        case PanfrostOp::CreateJobBo: op_create_job_bo(f); break;
        case PanfrostOp::MmapBo: op_mmap_bo(f); break;
        case PanfrostOp::GetParam: op_get_param(f); break;
        case PanfrostOp::GetBoOffset: op_get_bo_offset(f); break;
        case PanfrostOp::WaitBo: op_wait_bo(f); break;
        case PanfrostOp::Submit:
        case PanfrostOp::Submit2: op_submit(f); break;
        case PanfrostOp::JmCtxCreate: op_jm_ctx_create(f); break;
        case PanfrostOp::JmCtxDestroy: op_jm_ctx_destroy(f); break;
        case PanfrostOp::SyncobjCreate: op_syncobj_create(f); break;
        case PanfrostOp::SyncobjDestroy: op_syncobj_destroy(f); break;
        case PanfrostOp::SyncobjWait: op_syncobj_wait(f); break;
        case PanfrostOp::GemClose: op_gem_close(f); break;
        case PanfrostOp::CloseFile: op_close_file(f); break;
        case PanfrostOp::Advance: op_advance(f); break;
        case PanfrostOp::Fault: op_fault(f); break;
        case PanfrostOp::RawIoctl: op_raw_ioctl(f); break;
        }
    }
    return release();
}

std::string PanfrostProgram::release() {
    // Faults belong to the program: none outlives it.
    kshim::fault_inject_disarm();
    w_.gpu().faults().clear();
    for (int f = 0; f < kPanfrostMaxFiles; f++)
        close_file(f);
    std::string out;
    const bool all = w_.rt().run_until(
        [&] {
            for (kshim::dma_fence* fence : out_fences_)
                if (!kshim::dma_fence_is_signaled(fence))
                    return false;
            return true;
        },
        kSignalBound);
    if (!all)
        out += "an out fence never signalled after its file closed\n";
    for (kshim::dma_fence* fence : out_fences_)
        kshim::dma_fence_put(fence);
    out_fences_.clear();
    out += w_.check(alloc_armed_ ? alloc_failure_warn : nullptr);
    return out;
}

}  // namespace upanthor_fuzz

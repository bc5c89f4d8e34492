// (no upstream counterpart) fuzz_panfrost_ioctl's SUBMIT (fuzz/panfrost_ops.h): a small chain laid
// out in one of the file's CPU-mapped BOs (or a wild jc), with BO lists, in_syncs, an out_sync,
// requirements, a JM context and pad drawn from what the program made or any value.
#include <cstring>

#include "fuzz/panfrost_ops.h"
#include "hw/jm/job_desc.h"

namespace upanthor_fuzz {

namespace desc = panfrost::desc;
using panfrost::testing::PanfrostJobBo;
using panfrost::testing::PfSubmit;

namespace {

// The chain kinds SUBMIT lays out.
enum ChainKind : uint32_t {
    kValid,       // 1-4 WRITE_VALUE jobs into the BO, NULL jobs between
    kNulls,       // NULL jobs only
    kEndless,     // IGT's endless loop: the 500 ms timeout and a reset
    kUnmapped,    // a WRITE_VALUE to a VA nothing maps: an MMU fault
    kDone,        // a header already DONE: DATA_INVALID_FAULT
    kBadType,     // a job type the GPU does not know: JOB_CONFIG_FAULT
    kWildJc,      // jc anywhere
    kCycleCount,  // a cycle-counter WRITE_VALUE
    kChainKinds,
};

}  // namespace

void PanfrostProgram::op_submit(int f) {
    File& fl = files_[f];
    PfSubmit s;
    const uint32_t kind = in_.below(kChainKinds);
    PanfrostJobBo* bo = fl.job_bos.empty() ? nullptr : &fl.job_bos[in_.below(static_cast<uint32_t>(fl.job_bos.size()))];
    if (bo && !bo->fits(8 * 128))
        bo->used = 0;  // reuse the BO from the start (chains still running there may meet it)
    if (!bo || kind == kWildJc) {
        s.jc = in_.edge_u64();
    } else {
        switch (kind) {
        case kValid: {
            u64 prev = 0;
            for (uint32_t i = 0, n = 1 + in_.below(4); i < n; i++) {
                if (in_.flag()) {
                    prev = bo->null_job(prev);
                    if (!s.jc)
                        s.jc = prev;
                }
                prev = bo->write_value(bo->slot(), in_.u64(), prev);
                if (!s.jc)
                    s.jc = prev;
            }
            break;
        }
        case kNulls: {
            u64 prev = 0;
            for (uint32_t i = 0, n = 1 + in_.below(8); i < n; i++) {
                prev = bo->null_job(prev);
                if (!s.jc)
                    s.jc = prev;
            }
            break;
        }
        case kEndless: s.jc = bo->endless(); break;
        case kUnmapped: s.jc = bo->write_value(in_.pick<u64>({0, 0x1000000, 0x100000000ull, in_.u64()}), 1); break;
        case kDone:
            s.jc = bo->write_value(bo->slot(), 1);
            bo->header(s.jc)->exception_status = desc::kJobStatusDone;
            break;
        case kBadType:
            s.jc = bo->null_job();
            bo->header(s.jc)->control = desc::job_control(desc::kJobTypeCount + in_.below(100), 1);
            break;
        case kCycleCount: s.jc = bo->write_value(bo->slot(), 0, 0, desc::kWriteValueCycleCounter); break;
        default: break;
        }
        if (!s.jc)
            s.jc = bo->va;  // the BO was full: whatever is at its start
    }
    // BOs: the chain's BO most of the time, plus what the file made or any handle.
    if (bo && in_.u8() < 200)
        s.bos.push_back(bo->handle);
    for (uint32_t i = 0, n = in_.below(3); i < n; i++)
        s.bos.push_back(pick_handle(fl.bos));
    for (uint32_t i = 0, n = in_.u8() < 192 ? 0 : 1 + in_.below(2); i < n; i++)
        s.in_syncs.push_back(pick_handle(fl.syncobjs));
    // The out_sync: a syncobj of the file (created here if it has none), none, or any handle.
    const uint8_t out = in_.u8();
    if (out < 200) {
        if (fl.syncobjs.empty()) {
            u32 h = 0;
            if (panfrost::testing::pf_syncobj_create(fl.file, &h) == 0)
                fl.syncobjs.push_back(h);
        }
        if (!fl.syncobjs.empty())
            s.out_sync = fl.syncobjs[out % fl.syncobjs.size()];
    } else if (out >= 248) {
        s.out_sync = in_.edge_u32();
    }
    s.requirements = in_.pick<u32>(
        {0, 0, PANFROST_JD_REQ_FS, PANFROST_JD_REQ_CYCLE_COUNT, PANFROST_JD_REQ_FS | PANFROST_JD_REQ_CYCLE_COUNT, 4});
    s.ctx = pick_handle(fl.ctxs);
    if (in_.u8() >= 248)
        s.pad = in_.edge_u32();

    int ret;
    if (in_.u8() >= 248) {
        // An unregistered user pointer for the BO list: -EFAULT.
        drm_panfrost_submit args{};
        args.jc = s.jc;
        args.bo_handles = 0x1000;
        args.bo_handle_count = 1 + in_.below(4);
        args.out_sync = s.out_sync;
        ret = panfrost::testing::pf_ioctl(fl.file, drm::uapi::DRM_IOCTL_PANFROST_SUBMIT, &args, sizeof(args));
    } else {
        ret = panfrost::testing::pf_submit(fl.file, s);
    }
    if (ret == 0 && s.out_sync) {
        if (kshim::dma_fence* fence = panfrost::testing::pf_syncobj_fence(fl.file, s.out_sync))
            out_fences_.push_back(fence);
    }
    char args[96];
    std::snprintf(args, sizeof(args), "kind=%u jc=%#llx bos=%zu req=%u ctx=%u", kind,
                  static_cast<unsigned long long>(s.jc), s.bos.size(), s.requirements, s.ctx);
    trace(f, "SUBMIT", args, ret);
}

}  // namespace upanthor_fuzz

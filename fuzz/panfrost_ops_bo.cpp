// (no upstream counterpart) fuzz_panfrost_ioctl's BO ops (fuzz/panfrost_ops.h): CREATE_BO with
// edge sizes and flags, a CPU-mapped BO for job chains, MMAP_BO (and a mapping of the offset),
// GET_BO_OFFSET, WAIT_BO and GEM_CLOSE.
#include "drm/drm_mmap.h"
#include "fuzz/panfrost_ops.h"

namespace upanthor_fuzz {

using panfrost::testing::pf_ioctl;

void PanfrostProgram::op_create_bo(int f) {
    drm_panfrost_create_bo args{};
    args.size = in_.edge_u32();
    args.flags = in_.pick<u32>({0, PANFROST_BO_NOEXEC, PANFROST_BO_NOEXEC | PANFROST_BO_HEAP, PANFROST_BO_WB_MMAP,
                                PANFROST_BO_HEAP, PANFROST_BO_HEAP | PANFROST_BO_WB_MMAP | PANFROST_BO_NOEXEC});
    if (in_.u8() >= 240)
        args.flags = in_.edge_u32();
    if (in_.u8() >= 248)
        args.pad = in_.edge_u32();
    // A heap is VA only; anything else is backed at creation: cut large valid sizes.
    if (!(args.flags & PANFROST_BO_HEAP) && args.size > kPanfrostMaxBoBytes)
        args.size = kPanfrostMaxBoBytes;
    const int ret = pf_ioctl(files_[f].file, drm::uapi::DRM_IOCTL_PANFROST_CREATE_BO, &args, sizeof(args));
    if (ret == 0)
        files_[f].bos.push_back(args.handle);
    trace(f, "CREATE_BO", "size=" + std::to_string(args.size) + " flags=" + std::to_string(args.flags), ret);
}

void PanfrostProgram::op_create_job_bo(int f) {
    File& fl = files_[f];
    panfrost::testing::PanfrostJobBo bo;
    const size_t size = 4096u << in_.below(5);  // 4 KiB .. 64 KiB
    const int ret = panfrost::testing::pf_job_bo(fl.file, size, &bo);
    if (bo.handle)
        fl.bos.push_back(bo.handle);
    if (ret == 0)
        fl.job_bos.push_back(bo);
    else
        panfrost::testing::pf_job_bo_release(&bo);
    trace(f, "CREATE_BO+MMAP", "size=" + std::to_string(size), ret);
}

void PanfrostProgram::op_mmap_bo(int f) {
    drm_panfrost_mmap_bo args{};
    args.handle = pick_handle(files_[f].bos);
    if (in_.u8() >= 240)
        args.flags = in_.edge_u32();
    const int ret = pf_ioctl(files_[f].file, drm::uapi::DRM_IOCTL_PANFROST_MMAP_BO, &args, sizeof(args));
    long mret = 0;
    if (ret == 0 && in_.flag()) {
        // Map what the offset names, at a length that may not fit, and unmap it at once.
        const size_t len = in_.pick<size_t>({4096, 8192, 65536, 1}) + (in_.flag() ? 4096 : 0);
        drm::VmArea* vma = nullptr;
        mret = drm::drm_mmap(files_[f].file, args.offset, len, PROT_READ | PROT_WRITE, MAP_SHARED, &vma);
        if (mret == 0 && vma)
            drm::drm_munmap(vma);
    }
    trace(f, "MMAP_BO", "handle=" + std::to_string(args.handle) + " mmap=" + std::to_string(mret), ret);
}

void PanfrostProgram::op_get_bo_offset(int f) {
    drm_panfrost_get_bo_offset args{};
    args.handle = pick_handle(files_[f].bos);
    if (in_.u8() >= 240)
        args.pad = in_.edge_u32();
    const int ret = pf_ioctl(files_[f].file, drm::uapi::DRM_IOCTL_PANFROST_GET_BO_OFFSET, &args, sizeof(args));
    trace(f, "GET_BO_OFFSET", "handle=" + std::to_string(args.handle), ret);
}

void PanfrostProgram::op_wait_bo(int f) {
    drm_panfrost_wait_bo args{};
    args.handle = pick_handle(files_[f].bos);
    if (in_.u8() >= 240)
        args.pad = in_.edge_u32();
    // An absolute deadline: a poll, the past, a little or a lot later (virtual time).
    const kshim::ktime_t now = kshim::ktime_get();
    switch (in_.below(5)) {
    case 0: args.timeout_ns = 0; break;
    case 1: args.timeout_ns = now - 1; break;
    case 2: args.timeout_ns = now + 1 * kshim::NSEC_PER_MSEC; break;
    case 3: args.timeout_ns = now + 700 * kshim::NSEC_PER_MSEC; break;
    default: args.timeout_ns = static_cast<int64_t>(in_.edge_u64()); break;
    }
    // A deadline beyond the drain limit would only stall the program.
    if (args.timeout_ns > now + 2 * kshim::NSEC_PER_SEC)
        args.timeout_ns = now + 2 * kshim::NSEC_PER_SEC;
    const int ret = pf_ioctl(files_[f].file, drm::uapi::DRM_IOCTL_PANFROST_WAIT_BO, &args, sizeof(args));
    trace(f, "WAIT_BO", "handle=" + std::to_string(args.handle), ret);
}

void PanfrostProgram::op_gem_close(int f) {
    File& fl = files_[f];
    drm::uapi::drm_gem_close args{};
    args.handle = pick_handle(fl.bos);
    if (in_.u8() >= 248)
        args.pad = in_.edge_u32();
    const int ret = pf_ioctl(fl.file, drm::uapi::DRM_IOCTL_GEM_CLOSE, &args, sizeof(args));
    // A job BO stays mapped: its mapping holds the object (the chains in it keep working).
    trace(f, "GEM_CLOSE", "handle=" + std::to_string(args.handle), ret);
}

}  // namespace upanthor_fuzz

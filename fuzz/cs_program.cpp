// (no upstream counterpart) fuzz_cs's executor (cs_program.h).
#include "fuzz/cs_program.h"

#include <sys/mman.h>

#include <bit>
#include <cstring>
#include <vector>

#include "drm/drm_file.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_mmap.h"
#include "drm/drm_syncobj.h"
#include "drm/uaccess.h"
#include "hw/csf/cs_isa.h"
#include "hw/csf/mock_fw_formats.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/sim_abort.h"
#include "uapi/drm/panthor_drm.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;
namespace cs = panthor::cs;

namespace {
constexpr kshim::ktime_t kCsWait = 50 * kshim::NSEC_PER_MSEC;
constexpr kshim::ktime_t kCsTimeoutWait = 7 * kshim::NSEC_PER_SEC;  // past the 5 s job timeout

// Data-area offsets.
constexpr u64 kShaders = 0;       // one MockShader (64 bytes) per kind, Run first
constexpr u64 kSync = 0x1000;     // sync words
constexpr u64 kScratch = 0x2000;  // where stores land
constexpr u64 kHeapCtx = 0x3000;  // a (zeroed) heap context

template <class T>
int uioctl(drm::drm_file* f, unsigned cmd, T* arg) {
    drm::UserRange r(arg, sizeof(T));
    return drm::ioctl(f, cmd, arg);
}
}  // namespace

struct CsRunner::State {
    drm::drm_file* file = nullptr;
    u32 vm = 0, bo = 0;
    drm::VmArea* vma = nullptr;
    uint8_t* cpu = nullptr;
};

CsRunner::CsRunner(PanthorWorld& world) : world_(world), s_(new State) {
    if (!world.ptdev() || drm::drm_open(&world.ptdev()->base, &s_->file, true))
        fuzz_fail("fuzz_cs: no device");
    drm_panthor_vm_create vc{};
    if (uioctl(s_->file, DRM_IOCTL_PANTHOR_VM_CREATE, &vc))
        fuzz_fail("fuzz_cs: VM_CREATE");
    s_->vm = vc.id;
    drm_panthor_bo_create bc{};
    bc.size = kCsBoSize;
    if (uioctl(s_->file, DRM_IOCTL_PANTHOR_BO_CREATE, &bc))
        fuzz_fail("fuzz_cs: BO_CREATE");
    s_->bo = bc.handle;
    drm_panthor_vm_bind_op op{};
    op.flags = DRM_PANTHOR_VM_BIND_OP_TYPE_MAP;
    op.bo_handle = s_->bo;
    op.va = kCsVa;
    op.size = kCsBoSize;
    drm::UserRange rop(op);
    drm_panthor_vm_bind vb{};
    vb.vm_id = s_->vm;
    vb.ops = DRM_PANTHOR_OBJ_ARRAY(1, &op);
    if (uioctl(s_->file, DRM_IOCTL_PANTHOR_VM_BIND, &vb))
        fuzz_fail("fuzz_cs: VM_BIND");
    drm_panthor_bo_mmap_offset mo{};
    mo.handle = s_->bo;
    if (uioctl(s_->file, DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mo))
        fuzz_fail("fuzz_cs: BO_MMAP_OFFSET");
    if (drm::drm_mmap(s_->file, mo.offset, kCsBoSize, PROT_READ | PROT_WRITE, MAP_SHARED, &s_->vma) || !s_->vma->addr)
        fuzz_fail("fuzz_cs: mmap");
    s_->cpu = static_cast<uint8_t*>(s_->vma->addr);
    // Warm-up: the first job leaves state behind that lives as long as the VM (page-table pages
    // and index nodes of the kernel-VA mappings, the VM resv's last fence), which is not a leak
    // of any later input.
    const uint8_t nop[9] = {};
    run(nop, sizeof nop);
}

CsRunner::~CsRunner() {
    if (s_->vma)
        drm::drm_munmap(s_->vma);
    if (s_->file)
        drm::drm_release(s_->file);
    delete s_;
}

std::string CsRunner::run(const uint8_t* data, size_t size, CsRunResult* result) {
    CsRunResult res;
    const uint8_t head = size ? data[0] : 0;
    const size_t nwords = std::min<size_t>(size > 1 ? (size - 1) / 8 : 0, kCsMaxWords);
    const u64 data_va = kCsVa + kCsDataOffset;

    // Memory: zeroed data, one shader descriptor per kind, then the prologue and the words.
    uint8_t* d = s_->cpu + kCsDataOffset;
    std::memset(d, 0, 0x4000);
    for (u32 k = 0; k <= mock_hw::MockShader::kLastKind; k++) {
        mock_hw::MockShader sh;
        sh.kind = k;
        sh.duration_ns = 10 * kshim::NSEC_PER_USEC;
        sh.addr = k == mock_hw::MockShader::Access ? 0x7f000000ull : data_va + kScratch;  // Access: unmapped
        sh.value = k == mock_hw::MockShader::Fault ? 0x58 : 0x1234;
        std::memcpy(d + kShaders + 64 * k, &sh, sizeof sh);
    }
    const std::vector<u64> prologue = {
        cs::move48(0, data_va + kScratch),
        cs::move48(2, data_va + kSync),
        cs::move32(4, 1),
        cs::move48(16, data_va + kShaders),
        cs::move48(18, data_va + kShaders + 64),
        cs::move48(20, data_va + kShaders + 128),
        cs::move48(22, data_va + kShaders + 256),
        cs::move48(40, data_va + kShaders),
        cs::move48(24, data_va + kHeapCtx),
    };
    std::vector<u64> words = prologue;
    for (size_t i = 0; i < nwords; i++) {
        u64 w;
        std::memcpy(&w, data + 1 + 8 * i, 8);
        words.push_back(w);
    }
    std::memset(s_->cpu, 0, (kCsMaxWords + prologue.size()) * 8);
    std::memcpy(s_->cpu, words.data(), words.size() * 8);

    world_.mark();
    // The instruction budget (see cs_program.h).
    mock_hw::FaultSpec budget;
    budget.kind = mock_hw::FaultKind::CsFatal;
    budget.cs_event = mock_hw::CsFaultEvent::Instruction;
    budget.trigger = mock_hw::FaultTrigger::nth_occurrence(kCsBudget);
    if (!(head & 4))
        world_.gpu().faults().add(budget);

    std::string problem;
    try {
        drm_syncobj_create sc{};
        if (uioctl(s_->file, DRM_IOCTL_SYNCOBJ_CREATE, &sc))
            fuzz_fail("fuzz_cs: SYNCOBJ_CREATE");
        drm_panthor_queue_create q{};
        q.priority = 1;
        q.ringbuf_size = 4096;
        drm::UserRange rq(q);
        drm_panthor_group_create gc{};
        gc.queues = DRM_PANTHOR_OBJ_ARRAY(1, &q);
        gc.priority = static_cast<uint8_t>((head >> 1) & 1);  // LOW or MEDIUM: HIGH needs CAP_SYS_NICE
        gc.compute_core_mask = gc.fragment_core_mask = world_.ptdev()->gpu_info.shader_present;
        gc.tiler_core_mask = world_.ptdev()->gpu_info.tiler_present;
        gc.max_compute_cores = gc.max_fragment_cores = static_cast<uint8_t>(std::popcount(gc.compute_core_mask));
        gc.max_tiler_cores = static_cast<uint8_t>(std::popcount(gc.tiler_core_mask));
        gc.vm_id = s_->vm;
        int ret = uioctl(s_->file, DRM_IOCTL_PANTHOR_GROUP_CREATE, &gc);
        if (ret)
            problem += "GROUP_CREATE failed: " + std::to_string(ret) + "\n";
        drm_panthor_sync_op sig{};
        sig.flags = DRM_PANTHOR_SYNC_OP_SIGNAL | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ;
        sig.handle = sc.handle;
        drm::UserRange rs(sig);
        drm_panthor_queue_submit qs{};
        qs.stream_addr = kCsVa;
        qs.stream_size = static_cast<u32>(words.size() * 8);
        qs.syncs = DRM_PANTHOR_OBJ_ARRAY(1, &sig);
        drm::UserRange rqs(qs);
        drm_panthor_group_submit gs{};
        gs.group_handle = gc.group_handle;
        gs.queue_submits = DRM_PANTHOR_OBJ_ARRAY(1, &qs);
        if (!ret) {
            ret = uioctl(s_->file, DRM_IOCTL_PANTHOR_GROUP_SUBMIT, &gs);
            if (ret)
                problem += "GROUP_SUBMIT failed: " + std::to_string(ret) + "\n";
        }
        auto status = [&] {
            kshim::dma_fence* f = nullptr;
            if (drm::drm_syncobj_find_fence(s_->file, sc.handle, 0, 0, &f))
                return 0;
            const int st = kshim::dma_fence_get_status(f);
            kshim::dma_fence_put(f);
            return st;
        };
        if (!ret) {
            world_.rt().run_until([&] { return status() != 0; }, (head & 1) ? kCsTimeoutWait : kCsWait);
            res.fence_status = status();
            res.completed = res.fence_status == 1;
            drm_panthor_group_get_state st{};
            st.group_handle = gc.group_handle;
            if (uioctl(s_->file, DRM_IOCTL_PANTHOR_GROUP_GET_STATE, &st))
                problem += "GROUP_GET_STATE failed\n";
            res.group_state = st.state;
            if ((head & 1) && res.fence_status == 0)
                problem += "the job neither completed nor failed within the job timeout\n";
        }
        if (gc.group_handle) {
            drm_panthor_group_destroy gd{};
            gd.group_handle = gc.group_handle;
            if (uioctl(s_->file, DRM_IOCTL_PANTHOR_GROUP_DESTROY, &gd))
                problem += "GROUP_DESTROY failed\n";
        }
        drm_syncobj_destroy sd{};
        sd.handle = sc.handle;
        uioctl(s_->file, DRM_IOCTL_SYNCOBJ_DESTROY, &sd);
    } catch (const kshim::SimAbort&) {
        problem += "simulation deadlock while running the stream\n";
    }
    world_.gpu().faults().clear();
    if (result)
        *result = res;
    return problem + world_.check();
}

}  // namespace upanthor_fuzz

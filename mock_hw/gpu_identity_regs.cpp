// The family-independent GPU_CONTROL registers (see gpu_identity_regs.h).
#include "mock_hw/gpu_identity_regs.h"

#include "hw/csf/regs/gpu_regs.h"
#include "hw/jm/regs/gpu_regs.h"

namespace mock_hw {

// The offsets are restated per family (hw/jm/regs/gpu_regs.h); they coincide.
static_assert(panthor::GPU_ID == panfrost::GPU_ID && panthor::GPU_AS_PRESENT == panfrost::GPU_AS_PRESENT &&
              panthor::GPU_CYCLE_COUNT_LO == panfrost::GPU_CYCLE_COUNT_LO &&
              panthor::GPU_TIMESTAMP_LO == panfrost::GPU_TIMESTAMP_LO &&
              panthor::GPU_THREAD_FEATURES == panfrost::GPU_THREAD_FEATURES &&
              panthor::GPU_TEXTURE_FEATURES(3) == panfrost::GPU_TEXTURE_FEATURES(3) &&
              panthor::GPU_SHADER_PRESENT == panfrost::GPU_SHADER_PRESENT &&
              panthor::GPU_L2_PRESENT == panfrost::GPU_L2_PRESENT &&
              panthor::GPU_COHERENCY_FEATURES == panfrost::GPU_COHERENCY_FEATURES);

void declare_identity_registers(RegisterBank& bank, const GpuIdentity& id, const std::function<u64()>& cycle_count,
                                const std::function<u64()>& timestamp) {
    using namespace panthor;
    auto ro = [&](u32 off, const char* name, u32 v) { bank.add(off, RegDecl{.name = name, .reset = v}); };
    ro(GPU_ID, "GPU_ID", id.gpu_id);
    ro(GPU_L2_FEATURES, "GPU_L2_FEATURES", id.l2_features);
    ro(GPU_CORE_FEATURES, "GPU_CORE_FEATURES", id.core_features);
    ro(GPU_TILER_FEATURES, "GPU_TILER_FEATURES", id.tiler_features);
    ro(GPU_MEM_FEATURES, "GPU_MEM_FEATURES", id.mem_features);
    ro(GPU_MMU_FEATURES, "GPU_MMU_FEATURES", id.mmu_features);
    ro(GPU_AS_PRESENT, "GPU_AS_PRESENT", id.as_present);
    bank.add(GPU_CYCLE_COUNT_LO, RegDecl{.name = "GPU_CYCLE_COUNT_LO",
                                         .on_read = [cycle_count] { return static_cast<u32>(cycle_count()); }});
    bank.add(GPU_CYCLE_COUNT_HI, RegDecl{.name = "GPU_CYCLE_COUNT_HI",
                                         .on_read = [cycle_count] { return static_cast<u32>(cycle_count() >> 32); }});
    bank.add(GPU_TIMESTAMP_LO,
             RegDecl{.name = "GPU_TIMESTAMP_LO", .on_read = [timestamp] { return static_cast<u32>(timestamp()); }});
    bank.add(GPU_TIMESTAMP_HI, RegDecl{.name = "GPU_TIMESTAMP_HI",
                                       .on_read = [timestamp] { return static_cast<u32>(timestamp() >> 32); }});
    ro(GPU_THREAD_MAX_THREADS, "GPU_THREAD_MAX_THREADS", id.thread_max_threads);
    ro(GPU_THREAD_MAX_WORKGROUP_SIZE, "GPU_THREAD_MAX_WORKGROUP_SIZE", id.thread_max_workgroup_size);
    ro(GPU_THREAD_MAX_BARRIER_SIZE, "GPU_THREAD_MAX_BARRIER_SIZE", id.thread_max_barrier_size);
    ro(GPU_THREAD_FEATURES, "GPU_THREAD_FEATURES", id.thread_features);
    for (u32 n = 0; n < 4; n++)
        ro(GPU_TEXTURE_FEATURES(n), "GPU_TEXTURE_FEATURES", id.texture_features[n]);
    bank.add64(GPU_SHADER_PRESENT, "GPU_SHADER_PRESENT", id.shader_present);
    bank.add64(GPU_TILER_PRESENT, "GPU_TILER_PRESENT", id.tiler_present);
    bank.add64(GPU_L2_PRESENT, "GPU_L2_PRESENT", id.l2_present);
    ro(GPU_COHERENCY_FEATURES, "GPU_COHERENCY_FEATURES", id.coherency_features);
}

}  // namespace mock_hw

// The scheduler test fixture (sched_test.h).
#include "tests/panthor/sched_test.h"

#include <cstddef>
#include <cstring>
#include <deque>

namespace panthor::testing {

void SchedTest::SetUp() {
    PanthorTest::SetUp();
    if (!ptdev)
        return;
    vm_ = vm_create();
    bo_ = bo_create(kBoSize);
    ASSERT_EQ(vm_map(vm_, bo_, kVa, kBoSize), 0);
    cpu_ = static_cast<u8*>(bo_cpu(bo_, kBoSize));
    ASSERT_NE(cpu_, nullptr);
}

u64 SchedTest::put_stream(const std::vector<u64>& instrs) {
    const u64 off = stream_off_;
    EXPECT_LE(off + instrs.size() * 8, kDataOffset) << "stream area full";
    std::memcpy(cpu_ + off, instrs.data(), instrs.size() * 8);
    stream_off_ = (off + instrs.size() * 8 + 63) & ~u64{63};
    return kVa + off;
}

u64 SchedTest::store_stream(u64 off, u64 value) {
    return put_stream({cs::move48(2, data_va(off)), cs::move48(4, value & 0xFFFFFFFFFFFFull),
                       cs::move32(5, static_cast<u32>(value >> 32)), cs::store_multiple(4, 2, 0x3)});
}

u64 SchedTest::put_shader(const mock_hw::MockShader& sh) {
    const u64 off = shader_off_;
    std::memcpy(cpu_ + kDataOffset + off, &sh, sizeof(sh));
    shader_off_ += 64;
    return data_va(off);
}

drm_panthor_tiler_heap_create SchedTest::tiler_heap_create(u32 initial, u32 max_chunks, u32 vm, u32 chunk_size) {
    drm_panthor_tiler_heap_create a{};
    a.vm_id = vm ? vm : vm_;
    a.initial_chunk_count = initial;
    a.chunk_size = chunk_size;
    a.max_chunks = max_chunks;
    a.target_in_flight = 8;  // the tests' passes never end with FRAG_END: don't make them wait
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_TILER_HEAP_CREATE, &a), 0);
    return a;
}

std::vector<u64> SchedTest::count_instrs(u64 count_off) const {
    return {cs::move48(2, data_va(count_off)), cs::load_multiple(10, 2, 0x3), cs::add_imm64(10, 10, 1),
            cs::store_multiple(10, 2, 0x3)};
}

std::vector<u64> SchedTest::tiler_instrs(const drm_panthor_tiler_heap_create& heap, u32 chunks, u64 count_off,
                                         u32 chunk_size) {
    mock_hw::MockShader sh = shader(mock_hw::MockShader::Run, 100 * kshim::NSEC_PER_USEC);
    sh.heap_chunks = chunks;
    // The mock firmware leaves seeding the context's free list to the heap's user (docs/mock_hw.md).
    std::vector<u64> v = {cs::move48(0, heap.tiler_heap_ctx_gpu_va),
                          cs::heap_set(0),
                          cs::move48(4, heap.first_heap_chunk_gpu_va | (chunk_size >> 12)),
                          cs::store_multiple(4, 0, 0x3, offsetof(mock_hw::MockHeapContext, free_chunk)),
                          cs::wait(0xFF),
                          cs::heap_operation(cs::HEAP_VT_START),
                          cs::move48(16, put_shader(sh)),
                          cs::req_resource(false, false, false, true),
                          cs::run_idvs(),
                          cs::req_resource(false, false, false, false),
                          cs::wait(0xFF)};
    for (u64 i : count_instrs(count_off))
        v.push_back(i);
    return v;
}

std::vector<u64> SchedTest::fault_then_signal_instrs(u32 exception, u64 sync_off) {
    return {cs::move48(16, put_shader(shader(mock_hw::MockShader::Fault, 100 * kshim::NSEC_PER_USEC, 0, exception))),
            cs::run_compute(1),
            cs::wait(0xFF),
            cs::move48(6, data_va(sync_off)),
            cs::move48(8, 1),
            cs::sync_add64(6, 8, cs::SCOPE_SYSTEM, true)};
}

std::vector<u64> SchedTest::inherit_wait_instrs(u64 sync_off) const {
    return {cs::move48(6, data_va(sync_off)), cs::move48(8, 0), cs::sync_wait64(6, 8, cs::GREATER, true)};
}

drm_panthor_group_create SchedTest::group_args(u8 priority) const {
    drm_panthor_group_create a{};
    a.priority = priority;
    a.compute_core_mask = ptdev->gpu_info.shader_present;
    a.fragment_core_mask = ptdev->gpu_info.shader_present;
    a.tiler_core_mask = ptdev->gpu_info.tiler_present;
    a.max_compute_cores = static_cast<u8>(std::popcount(a.compute_core_mask));
    a.max_fragment_cores = static_cast<u8>(std::popcount(a.fragment_core_mask));
    a.max_tiler_cores = static_cast<u8>(std::popcount(a.tiler_core_mask));
    a.vm_id = vm_;
    return a;
}

int SchedTest::group_create_ret(u32* handle, std::vector<QueueSpec> queues, u8 priority, drm::drm_file* f, u32 vm) {
    std::vector<drm_panthor_queue_create> qs;
    for (const QueueSpec& q : queues) {
        drm_panthor_queue_create c{};
        c.priority = q.priority;
        c.ringbuf_size = q.ringbuf_size;
        qs.push_back(c);
    }
    drm::UserRange r(qs.data(), qs.size() * sizeof(qs[0]));
    drm_panthor_group_create a = group_args(priority);
    if (vm)
        a.vm_id = vm;
    a.queues = DRM_PANTHOR_OBJ_ARRAY(static_cast<u32>(qs.size()), qs.data());
    const int ret = ioctl(DRM_IOCTL_PANTHOR_GROUP_CREATE, &a, f);
    if (!ret && handle)
        *handle = a.group_handle;
    return ret;
}

u32 SchedTest::group_create(u32 queue_count, u8 priority) {
    u32 h = 0;
    EXPECT_EQ(group_create_ret(&h, std::vector<QueueSpec>(queue_count), priority), 0);
    return h;
}

int SchedTest::group_destroy(u32 handle, drm::drm_file* f) {
    drm_panthor_group_destroy a{};
    a.group_handle = handle;
    return ioctl(DRM_IOCTL_PANTHOR_GROUP_DESTROY, &a, f);
}

drm_panthor_group_get_state SchedTest::group_state(u32 handle) {
    drm_panthor_group_get_state a{};
    a.group_handle = handle;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_GROUP_GET_STATE, &a), 0);
    return a;
}

int SchedTest::submit(u32 group, std::vector<Submit> submits, drm::drm_file* f) {
    std::vector<drm_panthor_queue_submit> qs;
    std::deque<drm::UserRange> ranges;  // not copyable: a deque never moves them
    for (Submit& s : submits) {
        drm_panthor_queue_submit q{};
        q.queue_index = s.queue;
        q.stream_addr = s.stream;
        q.stream_size = s.size;
        q.latest_flush = s.latest_flush;
        if (!s.syncs.empty()) {
            ranges.emplace_back(s.syncs.data(), s.syncs.size() * sizeof(s.syncs[0]));
            q.syncs = DRM_PANTHOR_OBJ_ARRAY(static_cast<u32>(s.syncs.size()), s.syncs.data());
        }
        qs.push_back(q);
    }
    ranges.emplace_back(qs.data(), qs.size() * sizeof(qs[0]));
    drm_panthor_group_submit a{};
    a.group_handle = group;
    a.queue_submits = DRM_PANTHOR_OBJ_ARRAY(static_cast<u32>(qs.size()), qs.data());
    return ioctl(DRM_IOCTL_PANTHOR_GROUP_SUBMIT, &a, f);
}

u32 SchedTest::submit_stream(u32 group, u32 queue, u64 stream, u32 size) {
    const u32 s = syncobj_create();
    EXPECT_EQ(submit(group, {{.queue = queue, .stream = stream, .size = size, .syncs = {signal_op(s)}}}), 0);
    return s;
}

kshim::dma_fence* SchedTest::fence_of(u32 handle, drm::drm_file* f) {
    kshim::dma_fence* fence = nullptr;
    return drm::drm_syncobj_find_fence(f ? f : file, handle, 0, 0, &fence) ? nullptr : fence;
}

SchedTest::Done SchedTest::wait_done(u32 handle, kshim::ktime_t timeout, drm::drm_file* f) {
    Done d;
    kshim::dma_fence* fence = fence_of(handle, f);
    if (!fence)
        return d;
    d.signalled = run_until([&] { return kshim::dma_fence_is_signaled(fence); }, timeout);
    if (d.signalled) {
        d.status = kshim::dma_fence_get_status(fence);
        d.at = kshim::dma_fence_timestamp(fence);
    }
    kshim::dma_fence_put(fence);
    return d;
}

}  // namespace panthor::testing

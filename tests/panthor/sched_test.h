// The fixture of the CSF scheduler tests (GROUP_* ioctls, submission, rotation, faults): the
// panthor fixture plus what a client needs to run work: a VM with a CPU-visible BO holding
// command streams and data, groups, submits with sync ops, and syncobj waits.
#pragma once
#include <initializer_list>
#include <vector>

#include "drm/drm_syncobj.h"
#include "hw/csf/cs_isa.h"
#include "hw/csf/mock_fw_formats.h"
#include "panthor/panthor_sched.h"
#include "tests/panthor/panthor_test.h"

namespace panthor::testing {

namespace cs = panthor::cs;

class SchedTest : public PanthorTest {
protected:
    static constexpr u64 kMs = kshim::NSEC_PER_MSEC;
    static constexpr u64 kVa = 0x1000000;       // the BO's GPU VA
    static constexpr u64 kBoSize = 4ull << 20;  // streams at the start, data from kDataOffset
    static constexpr u64 kDataOffset = 2ull << 20;

    void SetUp() override;

    // ---- memory: one BO mapped at kVa in vm_ and on the CPU ----
    u64 data_va(u64 off) const { return kVa + kDataOffset + off; }
    template <class T = u64>
    T read_data(u64 off) const {
        return std::atomic_ref<T>(*reinterpret_cast<T*>(cpu_ + kDataOffset + off)).load();
    }
    template <class T = u64>
    void write_data(u64 off, T v) {
        std::atomic_ref<T>(*reinterpret_cast<T*>(cpu_ + kDataOffset + off)).store(v);
    }
    // Appends a stream (64-byte aligned) to the stream area; returns its GPU VA.
    u64 put_stream(const std::vector<u64>& instrs);
    // A stream storing the 64-bit `value` at data offset `off`.
    u64 store_stream(u64 off, u64 value);
    // A MockShader descriptor in the data area; returns its GPU VA.
    u64 put_shader(const mock_hw::MockShader& sh);
    // A MockShader of `kind` (MockShader::Run/Write/Hang/Access/Fault) with its parameters.
    static mock_hw::MockShader shader(u32 kind, kshim::ktime_t duration, u64 addr = 0, u64 value = 0) {
        mock_hw::MockShader sh;
        sh.kind = kind;
        sh.duration_ns = static_cast<u64>(duration);
        sh.addr = addr;
        sh.value = value;
        return sh;
    }

    // ---- fault workloads shared by the recovery tests and the fault campaign ----
    // TILER_HEAP_CREATE on `vm` (0: vm_); the returned args (handle, context and first chunk VAs).
    drm_panthor_tiler_heap_create tiler_heap_create(u32 initial, u32 max_chunks, u32 vm = 0,
                                                    u32 chunk_size = 128 * 1024);
    // A tiling pass that seeds the heap's free list with its first chunk, then runs a RUN_IDVS
    // whose job takes `chunks` chunks; when the heap cannot give them the driver's TILER_OOM
    // reply decides what happens. Afterwards the stream adds one to the u64 at `count_off`.
    std::vector<u64> tiler_instrs(const drm_panthor_tiler_heap_create& heap, u32 chunks, u64 count_off,
                                  u32 chunk_size = 128 * 1024);
    // The instructions adding one to the u64 at data offset `count_off` (r10..r11, d2).
    std::vector<u64> count_instrs(u64 count_off) const;
    // A job that ends with CS_FAULT `exception` and then signals the 64-bit sync object at data
    // offset `sync_off` with error propagation (its error word becomes non-zero).
    std::vector<u64> fault_then_signal_instrs(u32 exception, u64 sync_off);
    // A SYNC_WAIT64 until the sync object at `sync_off` is > 0, rejecting (inheriting) its error.
    std::vector<u64> inherit_wait_instrs(u64 sync_off) const;

    // ---- groups ----
    struct QueueSpec {
        u8 priority = 1;
        u32 ringbuf_size = 4096;
    };
    drm_panthor_group_create group_args(u8 priority = PANTHOR_GROUP_PRIORITY_MEDIUM) const;
    // 0 and *handle, or the ioctl's errno.
    int group_create_ret(u32* handle, std::vector<QueueSpec> queues = {{}}, u8 priority = PANTHOR_GROUP_PRIORITY_MEDIUM,
                         drm::drm_file* f = nullptr, u32 vm = 0);
    u32 group_create(u32 queue_count = 1, u8 priority = PANTHOR_GROUP_PRIORITY_MEDIUM);
    int group_destroy(u32 handle, drm::drm_file* f = nullptr);
    drm_panthor_group_get_state group_state(u32 handle);

    // ---- submission ----
    static drm_panthor_sync_op signal_op(u32 handle, u64 point = 0) {
        drm_panthor_sync_op op{};
        op.flags = DRM_PANTHOR_SYNC_OP_SIGNAL |
                   (point ? DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ : DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ);
        op.handle = handle;
        op.timeline_value = point;
        return op;
    }
    static drm_panthor_sync_op wait_op(u32 handle, u64 point = 0) {
        drm_panthor_sync_op op = signal_op(handle, point);
        op.flags &= ~DRM_PANTHOR_SYNC_OP_SIGNAL;
        return op;
    }
    struct Submit {
        u32 queue = 0;
        u64 stream = 0;  // GPU VA (0: a pure sync point)
        u32 size = 0;    // bytes
        u32 latest_flush = 0;
        std::vector<drm_panthor_sync_op> syncs;
    };
    // GROUP_SUBMIT; returns the ioctl's result.
    int submit(u32 group, std::vector<Submit> submits, drm::drm_file* f = nullptr);
    // One stream on `queue` signalling a new binary syncobj, whose handle is returned.
    u32 submit_stream(u32 group, u32 queue, u64 stream, u32 size);

    // ---- waiting for jobs ----
    // A reference to the fence of binary syncobj `handle` (nullptr if it has none).
    kshim::dma_fence* fence_of(u32 handle, drm::drm_file* f = nullptr);
    // Runs until `handle`'s fence signals; its status and when it signalled.
    struct Done {
        bool signalled = false;
        int status = 0;
        kshim::ktime_t at = 0;
    };
    Done wait_done(u32 handle, kshim::ktime_t timeout, drm::drm_file* f = nullptr);

    u32 vm_ = 0;
    u32 bo_ = 0;
    u8* cpu_ = nullptr;
    u64 stream_off_ = 0;           // next free byte of the stream area
    u64 shader_off_ = 1ull << 20;  // shaders live in the data area from 1 MiB
};

}  // namespace panthor::testing

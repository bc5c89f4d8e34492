// The GROUP_* ioctls as a client sees them (simulated runtime): one table row per validation rule
// of GROUP_CREATE, GROUP_DESTROY, GROUP_SUBMIT and GROUP_GET_STATE (docs/hw/csf/uapi.md,
// checked against upstream panthor_drv.c / panthor_sched.c) with the kernel's errno, plus what a
// failed call must leave behind: no group handle taken, no job run, no syncobj given a fence.
#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "drm/drm_file.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

using drm::user_ptr;
using drm::UserRange;

constexpr u32 kMarker = 0xC0FFEE;
constexpr u32 kBadHandle = 0x1234;
// uAPI limits (docs/hw/csf/uapi.md, fw-interfaces.md).
constexpr u32 kMaxGroupsPerPool = 128;
constexpr u32 kMaxCsPerCsg = 32;

// `v`'s elements laid out `stride` bytes apart, as a userspace built against another uAPI
// version would: a shorter stride truncates them, a longer one pads each with `tail`.
template <class T>
std::vector<u8> pack(const std::vector<T>& v, u32 stride, u8 tail) {
    std::vector<u8> out(std::max<size_t>(1, size_t{stride} * v.size()), tail);
    for (size_t i = 0; i < v.size(); i++)
        std::memcpy(out.data() + i * stride, &v[i], std::min<size_t>(stride, sizeof(T)));
    return out;
}

class GroupIoctlTest : public SchedTest {
public:
    panthor_file* pfile(drm::drm_file* f = nullptr) { return static_cast<panthor_file*>((f ? f : file)->driver_priv); }

    // ---- GROUP_CREATE with full control of the queue array ----
    struct CreateReq {
        drm_panthor_group_create args{};
        std::vector<drm_panthor_queue_create> queues;
        u32 stride = sizeof(drm_panthor_queue_create);
        u8 tail = 0;             // the bytes past sizeof(drm_panthor_queue_create) when stride is larger
        int count = -1;          // queues.count if >= 0, else queues.size()
        bool bad_array = false;  // queues.array not user memory
    };
    CreateReq create_req(u8 priority = PANTHOR_GROUP_PRIORITY_MEDIUM) const {
        CreateReq r;
        r.args = group_args(priority);
        drm_panthor_queue_create q{};
        q.priority = 1;
        q.ringbuf_size = 4096;
        r.queues = {q};
        return r;
    }
    int create(CreateReq& r, u32* handle = nullptr, drm::drm_file* f = nullptr) {
        std::vector<u8> bytes = pack(r.queues, r.stride, r.tail);
        std::vector<u8> unregistered(bytes.size());
        std::unique_ptr<UserRange> range;
        if (!r.bad_array)
            range = std::make_unique<UserRange>(bytes.data(), bytes.size());
        r.args.queues.stride = r.stride;
        r.args.queues.count = r.count >= 0 ? static_cast<u32>(r.count) : static_cast<u32>(r.queues.size());
        r.args.queues.array = user_ptr(r.bad_array ? unregistered.data() : bytes.data());
        r.args.group_handle = 0;
        const int ret = ioctl(DRM_IOCTL_PANTHOR_GROUP_CREATE, &r.args, f);
        if (handle)
            *handle = ret ? 0 : r.args.group_handle;
        return ret;
    }

    // ---- GROUP_SUBMIT with full control of both array levels ----
    struct SubmitReq {
        drm_panthor_group_submit args{};                      // group_handle and pad; queue_submits is built
        std::vector<drm_panthor_queue_submit> qs;             // syncs are built from `syncs`
        std::vector<std::vector<drm_panthor_sync_op>> syncs;  // one list per queue submit
        u32 q_stride = sizeof(drm_panthor_queue_submit);
        u8 q_tail = 0;
        u32 s_stride = sizeof(drm_panthor_sync_op);
        u8 s_tail = 0;
        bool bad_q_array = false, bad_s_array = false;
    };
    int submit_raw(SubmitReq& r, drm::drm_file* f = nullptr) {
        std::vector<std::vector<u8>> sync_bytes;
        std::vector<std::unique_ptr<UserRange>> ranges;
        std::vector<u8> unregistered(4096);
        for (size_t i = 0; i < r.qs.size(); i++) {
            const std::vector<drm_panthor_sync_op> none;
            const auto& ops = i < r.syncs.size() ? r.syncs[i] : none;
            sync_bytes.push_back(pack(ops, r.s_stride, r.s_tail));
            r.qs[i].syncs.stride = r.s_stride;
            r.qs[i].syncs.count = static_cast<u32>(ops.size());
            r.qs[i].syncs.array = user_ptr(r.bad_s_array ? unregistered.data() : sync_bytes.back().data());
            if (!r.bad_s_array)
                ranges.push_back(std::make_unique<UserRange>(sync_bytes.back().data(), sync_bytes.back().size()));
        }
        std::vector<u8> q_bytes = pack(r.qs, r.q_stride, r.q_tail);
        if (!r.bad_q_array)
            ranges.push_back(std::make_unique<UserRange>(q_bytes.data(), q_bytes.size()));
        r.args.queue_submits.stride = r.q_stride;
        r.args.queue_submits.count = static_cast<u32>(r.qs.size());
        r.args.queue_submits.array = user_ptr(r.bad_q_array ? unregistered.data() : q_bytes.data());
        return ioctl(DRM_IOCTL_PANTHOR_GROUP_SUBMIT, &r.args, f);
    }

    // The fence a syncobj point holds now (a reference), or nullptr.
    kshim::dma_fence* fence_of(u32 handle, u64 point = 0) {
        kshim::dma_fence* f = nullptr;
        return drm::drm_syncobj_find_fence(file, handle, point, 0, &f) ? nullptr : f;
    }

    drm_panthor_group_priorities_info priorities(drm::drm_file* f = nullptr) {
        drm_panthor_group_priorities_info info{};
        std::memset(&info, 0xFF, sizeof(info));
        UserRange r(info);
        drm_panthor_dev_query q{};
        q.type = DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO;
        q.size = sizeof(info);
        q.pointer = user_ptr(&info);
        EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &q, f), 0);
        return info;
    }

    int destroy_raw(u32 handle, u32 pad) {
        drm_panthor_group_destroy a{};
        a.group_handle = handle;
        a.pad = pad;
        return ioctl(DRM_IOCTL_PANTHOR_GROUP_DESTROY, &a);
    }
    int get_state_raw(u32 handle, u32 pad, drm_panthor_group_get_state* out = nullptr) {
        drm_panthor_group_get_state a{};
        a.group_handle = handle;
        a.pad = pad;
        const int ret = ioctl(DRM_IOCTL_PANTHOR_GROUP_GET_STATE, &a);
        if (out)
            *out = a;
        return ret;
    }
};

// =============================================================================================
// GROUP_CREATE

struct CreateRow {
    const char* name;
    int expected;
    void (*mutate)(GroupIoctlTest::CreateReq& r, const drm_panthor_gpu_info& gi);
    bool cap_sys_nice = false;
};
std::ostream& operator<<(std::ostream& os, const CreateRow& r) {
    return os << r.name;
}

class GroupCreateErrno : public GroupIoctlTest, public ::testing::WithParamInterface<CreateRow> {};

// A bit just outside `present`.
u64 outside(u64 present) {
    return u64{1} << std::countr_one(present);
}

TEST_P(GroupCreateErrno, ReturnsKernelErrno) {
    const CreateRow& row = GetParam();
    set_cap_sys_nice(row.cap_sys_nice);
    CreateReq r = create_req();
    row.mutate(r, ptdev->gpu_info);
    u32 handle = 0;
    ASSERT_EQ(create(r, &handle), row.expected);
    if (row.expected == 0) {
        EXPECT_EQ(handle, 1u);
        EXPECT_EQ(group_state(handle).state, 0u);
        EXPECT_EQ(group_destroy(handle), 0);
        return;
    }
    // Nothing was registered: the next group still gets the first handle.
    set_cap_sys_nice(false);
    CreateReq ok = create_req();
    ASSERT_EQ(create(ok, &handle), 0);
    EXPECT_EQ(handle, 1u);
    EXPECT_EQ(group_destroy(handle), 0);
}

std::string create_row_name(const ::testing::TestParamInfo<CreateRow>& info) {
    return info.param.name;
}

using CR = GroupIoctlTest::CreateReq;
using GI = drm_panthor_gpu_info;

drm_panthor_queue_create queue(u8 prio, u32 ringbuf) {
    drm_panthor_queue_create q{};
    q.priority = prio;
    q.ringbuf_size = ringbuf;
    return q;
}

INSTANTIATE_TEST_SUITE_P(
    Create, GroupCreateErrno,
    ::testing::Values(
        CreateRow{"Valid", 0, [](CR&, const GI&) {}},
        // The queue array (obj_array rules, docs/hw/csf/uapi.md).
        CreateRow{"QueueCountZero", -EINVAL, [](CR& r, const GI&) { r.count = 0; }},
        CreateRow{"QueueCountAboveMaxCsPerCsg", -EINVAL,
                  [](CR& r, const GI&) { r.queues.assign(kMaxCsPerCsg + 1, queue(1, 4096)); }},
        CreateRow{"QueueStrideBelowMinimum", -EINVAL, [](CR& r, const GI&) { r.stride = 7; }},
        CreateRow{"QueueStrideLargerNonZeroTail", -E2BIG,
                  [](CR& r, const GI&) {
                      r.stride = 16;
                      r.tail = 0x5A;
                  }},
        CreateRow{"QueueStrideLargerZeroTail", 0, [](CR& r, const GI&) { r.stride = 16; }},
        CreateRow{"QueueArrayBadPointer", -EFAULT, [](CR& r, const GI&) { r.bad_array = true; }},
        CreateRow{"QueueArrayBadPointerWithLargerStride", -EFAULT,
                  [](CR& r, const GI&) {
                      r.stride = 16;
                      r.bad_array = true;
                  }},
        // Group priority and the CAP_SYS_NICE / master rule.
        CreateRow{"PriorityLow", 0, [](CR& r, const GI&) { r.args.priority = PANTHOR_GROUP_PRIORITY_LOW; }},
        CreateRow{"PriorityAboveRealtime", -EINVAL, [](CR& r, const GI&) { r.args.priority = 4; }},
        CreateRow{"PriorityAboveRealtimeWithCap", -EINVAL, [](CR& r, const GI&) { r.args.priority = 4; }, true},
        CreateRow{"PriorityHighWithoutCap", -EACCES,
                  [](CR& r, const GI&) { r.args.priority = PANTHOR_GROUP_PRIORITY_HIGH; }},
        CreateRow{"PriorityRealtimeWithoutCap", -EACCES,
                  [](CR& r, const GI&) { r.args.priority = PANTHOR_GROUP_PRIORITY_REALTIME; }},
        CreateRow{"PriorityHighWithCap", 0, [](CR& r, const GI&) { r.args.priority = PANTHOR_GROUP_PRIORITY_HIGH; },
                  true},
        CreateRow{"PriorityRealtimeWithCap", 0,
                  [](CR& r, const GI&) { r.args.priority = PANTHOR_GROUP_PRIORITY_REALTIME; }, true},
        CreateRow{"Pad", -EINVAL, [](CR& r, const GI&) { r.args.pad = 1; }},
        // Core masks and counts.
        CreateRow{"ComputeMaskOutsidePresent", -EINVAL,
                  [](CR& r, const GI& gi) { r.args.compute_core_mask |= outside(gi.shader_present); }},
        CreateRow{"FragmentMaskOutsidePresent", -EINVAL,
                  [](CR& r, const GI& gi) { r.args.fragment_core_mask |= outside(gi.shader_present); }},
        CreateRow{"TilerMaskOutsidePresent", -EINVAL,
                  [](CR& r, const GI& gi) { r.args.tiler_core_mask |= outside(gi.tiler_present); }},
        CreateRow{"MaxComputeCoresAbovePopcount", -EINVAL, [](CR& r, const GI&) { r.args.max_compute_cores++; }},
        CreateRow{"MaxFragmentCoresAbovePopcount", -EINVAL, [](CR& r, const GI&) { r.args.max_fragment_cores++; }},
        CreateRow{"MaxTilerCoresAbovePopcount", -EINVAL, [](CR& r, const GI&) { r.args.max_tiler_cores++; }},
        CreateRow{"SubsetMasksAndFewerCores", 0,
                  [](CR& r, const GI& gi) {
                      r.args.compute_core_mask = gi.shader_present & (0 - gi.shader_present);  // lowest core
                      r.args.max_compute_cores = 1;
                      r.args.max_fragment_cores = 0;
                  }},
        CreateRow{"MaxCoresAboveSubsetPopcount", -EINVAL,
                  [](CR& r, const GI& gi) {
                      r.args.compute_core_mask = gi.shader_present & (0 - gi.shader_present);
                      r.args.max_compute_cores = 2;
                  }},
        // The VM.
        CreateRow{"UnknownVm", -EINVAL, [](CR& r, const GI&) { r.args.vm_id = 99; }},
        CreateRow{"VmIdZero", -EINVAL, [](CR& r, const GI&) { r.args.vm_id = 0; }},
        // Per-queue rules.
        CreateRow{"QueuePad", -EINVAL, [](CR& r, const GI&) { r.queues[0].pad[2] = 1; }},
        CreateRow{"RingbufZero", -EINVAL, [](CR& r, const GI&) { r.queues[0].ringbuf_size = 0; }},
        CreateRow{"Ringbuf2K", -EINVAL, [](CR& r, const GI&) { r.queues[0].ringbuf_size = 2048; }},
        CreateRow{"Ringbuf4K", 0, [](CR& r, const GI&) { r.queues[0].ringbuf_size = 4096; }},
        CreateRow{"Ringbuf12KNotPowerOfTwo", -EINVAL, [](CR& r, const GI&) { r.queues[0].ringbuf_size = 12288; }},
        CreateRow{"Ringbuf64K", 0, [](CR& r, const GI&) { r.queues[0].ringbuf_size = 65536; }},
        CreateRow{"Ringbuf128K", -EINVAL, [](CR& r, const GI&) { r.queues[0].ringbuf_size = 131072; }},
        CreateRow{"QueuePriority15", 0, [](CR& r, const GI&) { r.queues[0].priority = 15; }},
        CreateRow{"QueuePriority16", -EINVAL, [](CR& r, const GI&) { r.queues[0].priority = 16; }},
        CreateRow{"LastQueueInvalid", -EINVAL,
                  [](CR& r, const GI&) { r.queues = {queue(1, 4096), queue(2, 8192), queue(3, 4096 + 8)}; }},
        // The mock G610 has 8 CS slots per CSG (CSIF_INFO cs_slot_count): a group fills at most
        // that many (upstream accepts up to 32 and then programs CS slots the FW does not have).
        CreateRow{"QueuesAsManyAsCsSlots", 0, [](CR& r, const GI&) { r.queues.assign(8, queue(1, 4096)); }},
        CreateRow{"QueuesMoreThanCsSlots", -EINVAL, [](CR& r, const GI&) { r.queues.assign(9, queue(1, 4096)); }}),
    create_row_name);

// =============================================================================================
// GROUP_SUBMIT

// What the submit rows work with: a 2-queue group, a stream storing kMarker at data offset 0,
// and syncobjs in the states the sync-op rules distinguish.
struct SubmitCtx {
    u32 group = 0;
    u32 destroyed_group = 0;
    u64 stream = 0;
    u32 size = 0;
    u32 sig = 0;       // binary, no fence yet: the row's signal target
    u32 nofence = 0;   // binary, never given a fence
    u32 fenced = 0;    // binary, holding a signalled fence
    u32 timeline = 0;  // no point yet
};

// What a successful submit does.
enum class Outcome {
    Runs,       // the stream runs and the signal targets get its fence
    SyncPoint,  // no stream: the signal targets get a (signalled) fence, nothing runs
    Nothing,    // nothing at all (no queue submits)
};

struct SubmitRow {
    const char* name;
    int expected;
    void (*mutate)(GroupIoctlTest::SubmitReq& r, const SubmitCtx& c);
    Outcome outcome = Outcome::Runs;
};
std::ostream& operator<<(std::ostream& os, const SubmitRow& r) {
    return os << r.name;
}

class GroupSubmitErrno : public GroupIoctlTest, public ::testing::WithParamInterface<SubmitRow> {};

TEST_P(GroupSubmitErrno, ReturnsKernelErrnoAndRunsNothingOnFailure) {
    const SubmitRow& row = GetParam();
    SubmitCtx c;
    c.group = group_create(2);
    c.destroyed_group = group_create(1);
    ASSERT_EQ(group_destroy(c.destroyed_group), 0);
    c.stream = store_stream(0, kMarker);
    c.size = 4 * 8;
    c.sig = syncobj_create();
    c.nofence = syncobj_create();
    c.fenced = syncobj_create(DRM_SYNCOBJ_CREATE_SIGNALED);
    c.timeline = syncobj_create();

    SubmitReq r;
    r.args.group_handle = c.group;
    drm_panthor_queue_submit q{};
    q.queue_index = 0;
    q.stream_addr = c.stream;
    q.stream_size = c.size;
    r.qs = {q};
    r.syncs = {{signal_op(c.sig)}};
    row.mutate(r, c);

    ASSERT_EQ(submit_raw(r), row.expected);
    if (row.expected == 0 && row.outcome == Outcome::Runs) {
        EXPECT_TRUE(run_until([&] { return read_data<u32>(0) == kMarker; }, 1000 * kMs));
        if (!r.qs.empty() && !r.syncs[0].empty() && r.syncs[0][0].handle == c.sig) {
            EXPECT_EQ(syncobj_wait({c.sig}, 1000 * kMs), 0);
            EXPECT_EQ(fence_status(c.sig), 1);
        }
        return;
    }
    // A failed submit pushes nothing: no job runs, the signal target gets no fence.
    advance(50 * kMs);
    EXPECT_EQ(read_data<u32>(0), 0u);
    if (row.expected == 0 && row.outcome == Outcome::SyncPoint) {
        EXPECT_EQ(fence_status(c.sig), 1) << "a sync point on an idle queue is done at once";
    } else {
        EXPECT_EQ(fence_status(c.sig), -EINVAL) << "the signal syncobj got a fence";
    }
    if (row.expected) {
        EXPECT_EQ(group_state(c.group).state, 0u) << "a rejected submit must not harm the group";
    }
}

std::string submit_row_name(const ::testing::TestParamInfo<SubmitRow>& info) {
    return info.param.name;
}

using SR = GroupIoctlTest::SubmitReq;
using SC = SubmitCtx;

drm_panthor_sync_op sync_op(u32 flags, u32 handle, u64 value = 0) {
    drm_panthor_sync_op op{};
    op.flags = flags;
    op.handle = handle;
    op.timeline_value = value;
    return op;
}
constexpr u32 SIG = DRM_PANTHOR_SYNC_OP_SIGNAL;
constexpr u32 BIN = DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ;
constexpr u32 TL = DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ;

INSTANTIATE_TEST_SUITE_P(
    Submit, GroupSubmitErrno,
    ::testing::Values(
        SubmitRow{"Valid", 0, [](SR&, const SC&) {}},
        SubmitRow{"Pad", -EINVAL, [](SR& r, const SC&) { r.args.pad = 1; }},
        SubmitRow{"GroupHandleZero", -EINVAL, [](SR& r, const SC&) { r.args.group_handle = 0; }},
        SubmitRow{"UnknownGroup", -EINVAL, [](SR& r, const SC&) { r.args.group_handle = kBadHandle; }},
        SubmitRow{"DestroyedGroup", -EINVAL, [](SR& r, const SC& c) { r.args.group_handle = c.destroyed_group; }},
        SubmitRow{"QueueIndexOutOfRange", -EINVAL, [](SR& r, const SC&) { r.qs[0].queue_index = 2; }},
        SubmitRow{"SecondQueue", 0, [](SR& r, const SC&) { r.qs[0].queue_index = 1; }},
        SubmitRow{"QueueSubmitPad", -EINVAL, [](SR& r, const SC&) { r.qs[0].pad = 1; }},
        SubmitRow{"SizeWithoutAddr", -EINVAL, [](SR& r, const SC&) { r.qs[0].stream_addr = 0; }},
        SubmitRow{"AddrWithoutSize", -EINVAL, [](SR& r, const SC&) { r.qs[0].stream_size = 0; }},
        SubmitRow{"AddrNot64ByteAligned", -EINVAL, [](SR& r, const SC&) { r.qs[0].stream_addr += 8; }},
        SubmitRow{"SizeNot8ByteAligned", -EINVAL, [](SR& r, const SC&) { r.qs[0].stream_size -= 4; }},
        SubmitRow{"LatestFlushBit24", -EINVAL, [](SR& r, const SC&) { r.qs[0].latest_flush = 1u << 24; }},
        SubmitRow{"LatestFlushBit30", -EINVAL, [](SR& r, const SC&) { r.qs[0].latest_flush = 1u << 30; }},
        SubmitRow{"LatestFlushBit31AndLowBits", 0, [](SR& r, const SC&) { r.qs[0].latest_flush = 0x80FFFFFFu; }},
        SubmitRow{"EmptyStreamIsASyncPoint", 0,
                  [](SR& r, const SC&) {
                      r.qs[0].stream_addr = 0;
                      r.qs[0].stream_size = 0;
                  },
                  Outcome::SyncPoint},
        // Sync ops (docs/hw/csf/uapi.md).
        SubmitRow{"SignalUnknownFlag", -EINVAL, [](SR& r, const SC&) { r.syncs[0][0].flags |= 1u << 8; }},
        SubmitRow{"WaitUnknownFlag", -EINVAL,
                  [](SR& r, const SC& c) { r.syncs[0].push_back(sync_op(BIN | (1u << 30), c.fenced)); }},
        SubmitRow{"SignalHandleType2", -EINVAL, [](SR& r, const SC& c) { r.syncs[0][0] = sync_op(SIG | 2, c.sig); }},
        SubmitRow{"WaitHandleType2", -EINVAL, [](SR& r, const SC& c) { r.syncs[0].push_back(sync_op(2, c.fenced)); }},
        SubmitRow{"SignalBinaryWithTimelineValue", -EINVAL,
                  [](SR& r, const SC& c) { r.syncs[0][0] = sync_op(SIG | BIN, c.sig, 1); }},
        SubmitRow{"WaitBinaryWithTimelineValue", -EINVAL,
                  [](SR& r, const SC& c) { r.syncs[0].push_back(sync_op(BIN, c.fenced, 1)); }},
        SubmitRow{"SignalUnknownHandle", -EINVAL,
                  [](SR& r, const SC&) { r.syncs[0].push_back(sync_op(SIG | BIN, kBadHandle)); }},
        SubmitRow{"SignalUnknownTimelineHandle", -EINVAL,
                  [](SR& r, const SC&) { r.syncs[0].push_back(sync_op(SIG | TL, kBadHandle, 3)); }},
        SubmitRow{"WaitUnknownHandle", -ENOENT,
                  [](SR& r, const SC&) { r.syncs[0].push_back(sync_op(BIN, kBadHandle)); }},
        SubmitRow{"WaitHandleWithoutFence", -EINVAL,
                  [](SR& r, const SC& c) { r.syncs[0].push_back(sync_op(BIN, c.nofence)); }},
        SubmitRow{"WaitTimelinePointNeverSubmitted", -EINVAL,
                  [](SR& r, const SC& c) { r.syncs[0].push_back(sync_op(TL, c.timeline, 7)); }},
        SubmitRow{"WaitSignalledSyncobj", 0, [](SR& r, const SC& c) { r.syncs[0].push_back(sync_op(BIN, c.fenced)); }},
        SubmitRow{"SignalTimelinePoint", 0,
                  [](SR& r, const SC& c) { r.syncs[0].push_back(sync_op(SIG | TL, c.timeline, 5)); }},
        SubmitRow{"WaitOnPointSignalledEarlierInTheBatch", 0,
                  [](SR& r, const SC& c) {
                      r.syncs[0].push_back(sync_op(SIG | TL, c.timeline, 1));
                      drm_panthor_queue_submit q{};
                      q.queue_index = 1;
                      r.qs.push_back(q);
                      r.syncs.push_back({sync_op(TL, c.timeline, 1)});
                  }},
        // obj_array rules on both levels (docs/hw/csf/uapi.md).
        SubmitRow{"QueueSubmitStrideBelowMinimum", -EINVAL, [](SR& r, const SC&) { r.q_stride = 32; }},
        SubmitRow{"QueueSubmitStrideLargerNonZeroTail", -E2BIG,
                  [](SR& r, const SC&) {
                      r.q_stride = 48;
                      r.q_tail = 1;
                  }},
        SubmitRow{"QueueSubmitStrideLargerZeroTail", 0, [](SR& r, const SC&) { r.q_stride = 48; }},
        SubmitRow{"SyncStrideBelowMinimum", -EINVAL, [](SR& r, const SC&) { r.s_stride = 8; }},
        SubmitRow{"SyncStrideLargerNonZeroTail", -E2BIG,
                  [](SR& r, const SC&) {
                      r.s_stride = 24;
                      r.s_tail = 0x80;
                  }},
        SubmitRow{"SyncStrideLargerZeroTail", 0, [](SR& r, const SC&) { r.s_stride = 24; }},
        SubmitRow{"QueueSubmitsBadPointer", -EFAULT, [](SR& r, const SC&) { r.bad_q_array = true; }},
        SubmitRow{"SyncsBadPointer", -EFAULT, [](SR& r, const SC&) { r.bad_s_array = true; }},
        SubmitRow{"EmptySyncArrayIgnoresItsPointer", 0,
                  [](SR& r, const SC&) {
                      r.syncs[0].clear();
                      r.bad_s_array = true;
                  }},
        SubmitRow{"NoQueueSubmits", 0, [](SR& r, const SC&) { r.qs.clear(); }, Outcome::Nothing}),
    submit_row_name);

// =============================================================================================
// GROUP_DESTROY and GROUP_GET_STATE

struct HandleRow {
    const char* name;
    int expected;
    int (*run)(GroupIoctlTest& t, u32 group);
};
std::ostream& operator<<(std::ostream& os, const HandleRow& r) {
    return os << r.name;
}

class GroupHandleErrno : public GroupIoctlTest, public ::testing::WithParamInterface<HandleRow> {};

TEST_P(GroupHandleErrno, ReturnsKernelErrno) {
    const HandleRow& row = GetParam();
    const u32 g = group_create();
    ASSERT_EQ(g, 1u);
    EXPECT_EQ(row.run(*this, g), row.expected);
}

std::string handle_row_name(const ::testing::TestParamInfo<HandleRow>& info) {
    return info.param.name;
}

using T = GroupIoctlTest;

INSTANTIATE_TEST_SUITE_P(
    Handles, GroupHandleErrno,
    ::testing::Values(HandleRow{"DestroyValid", 0, [](T& t, u32 g) { return t.destroy_raw(g, 0); }},
                      HandleRow{"DestroyPad", -EINVAL,
                                [](T& t, u32 g) {
                                    const int ret = t.destroy_raw(g, 1);
                                    // The group is still there.
                                    EXPECT_EQ(t.get_state_raw(g, 0), 0);
                                    return ret;
                                }},
                      HandleRow{"DestroyHandleZero", -EINVAL, [](T& t, u32) { return t.destroy_raw(0, 0); }},
                      HandleRow{"DestroyUnknown", -EINVAL, [](T& t, u32) { return t.destroy_raw(kBadHandle, 0); }},
                      HandleRow{"DestroyTwice", -EINVAL,
                                [](T& t, u32 g) {
                                    EXPECT_EQ(t.destroy_raw(g, 0), 0);
                                    return t.destroy_raw(g, 0);
                                }},
                      HandleRow{"GetStateValid", 0,
                                [](T& t, u32 g) {
                                    drm_panthor_group_get_state s{};
                                    const int ret = t.get_state_raw(g, 0, &s);
                                    EXPECT_EQ(s.state, 0u);
                                    EXPECT_EQ(s.fatal_queues, 0u);
                                    EXPECT_EQ(s.pad, 0u);
                                    return ret;
                                }},
                      HandleRow{"GetStatePad", -EINVAL, [](T& t, u32 g) { return t.get_state_raw(g, 1); }},
                      HandleRow{"GetStateHandleZero", -EINVAL, [](T& t, u32) { return t.get_state_raw(0, 0); }},
                      HandleRow{"GetStateUnknown", -EINVAL, [](T& t, u32) { return t.get_state_raw(kBadHandle, 0); }},
                      HandleRow{"GetStateAfterDestroy", -EINVAL,
                                [](T& t, u32 g) {
                                    EXPECT_EQ(t.destroy_raw(g, 0), 0);
                                    return t.get_state_raw(g, 0);
                                }}),
    handle_row_name);

// =============================================================================================
// Handles, priorities, bad top-level pointers, batches that fail half-way

TEST_F(GroupIoctlTest, HandlesStartAtOneAndTheLowestFreeIsReused) {
    EXPECT_EQ(group_create(), 1u);
    EXPECT_EQ(group_create(), 2u);
    EXPECT_EQ(group_create(), 3u);
    EXPECT_EQ(group_destroy(2), 0);
    EXPECT_EQ(group_create(), 2u);
    EXPECT_EQ(group_create(), 4u);
}

TEST_F(GroupIoctlTest, HandlesArePerFile) {
    const u32 g = group_create();
    drm::drm_file* f2 = nullptr;
    ASSERT_EQ(open_file(&f2), 0);
    const u32 vm2 = vm_create(0, f2);

    // The other file does not see this file's group...
    drm_panthor_group_get_state st{};
    st.group_handle = g;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_GROUP_GET_STATE, &st, f2), -EINVAL);
    EXPECT_EQ(submit(g, {{.queue = 0}}, f2), -EINVAL);
    EXPECT_EQ(group_destroy(g, f2), -EINVAL);
    // ...and numbers its own groups from 1.
    u32 h = 0;
    ASSERT_EQ(group_create_ret(&h, {{}}, PANTHOR_GROUP_PRIORITY_MEDIUM, f2, vm2), 0);
    EXPECT_EQ(h, 1u);
    EXPECT_EQ(group_state(g).state, 0u);
    drm::drm_release(f2);
    // Closing it destroyed its group only.
    EXPECT_EQ(group_state(g).state, 0u);
    EXPECT_EQ(group_destroy(g), 0);
}

TEST_F(GroupIoctlTest, MoreThan128GroupsIsEBUSY) {
    for (u32 i = 1; i <= kMaxGroupsPerPool; i++)
        ASSERT_EQ(group_create(), i);
    u32 h = 0;
    EXPECT_EQ(group_create_ret(&h), -EBUSY);
    EXPECT_EQ(group_destroy(77), 0);
    ASSERT_EQ(group_create_ret(&h), 0);
    EXPECT_EQ(h, 77u);
    EXPECT_EQ(group_create_ret(&h), -EBUSY);
}

// DEV_QUERY GROUP_PRIORITIES_INFO says exactly which priorities GROUP_CREATE accepts, for a
// render-node file without and with CAP_SYS_NICE and for the DRM master (a primary-node file).
struct PrioRow {
    const char* name;
    bool render;
    bool cap_sys_nice;
    u8 mask;
};
std::ostream& operator<<(std::ostream& os, const PrioRow& r) {
    return os << r.name;
}
class GroupPriorities : public GroupIoctlTest, public ::testing::WithParamInterface<PrioRow> {};

TEST_P(GroupPriorities, QueryMatchesWhatGroupCreateAccepts) {
    const PrioRow& row = GetParam();
    drm::drm_file* f = nullptr;
    ASSERT_EQ(open_file(&f, row.render), 0);
    set_cap_sys_nice(row.cap_sys_nice);
    const u32 vm = vm_create(0, f);

    const drm_panthor_group_priorities_info info = priorities(f);
    EXPECT_EQ(info.allowed_mask, row.mask);
    EXPECT_EQ(info.pad[0] | info.pad[1] | info.pad[2], 0);
    for (u32 prio = 0; prio <= PANTHOR_GROUP_PRIORITY_REALTIME + 1; prio++) {
        u32 h = 0;
        const int ret = group_create_ret(&h, {{}}, static_cast<u8>(prio), f, vm);
        const bool allowed = info.allowed_mask & (1u << prio);
        if (prio > PANTHOR_GROUP_PRIORITY_REALTIME)
            EXPECT_EQ(ret, -EINVAL) << "priority " << prio;
        else
            EXPECT_EQ(ret, allowed ? 0 : -EACCES) << "priority " << prio;
        if (!ret) {
            drm_panthor_group_destroy d{};
            d.group_handle = h;
            EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_GROUP_DESTROY, &d, f), 0);
        }
    }
    drm::drm_release(f);
}

INSTANTIATE_TEST_SUITE_P(Files, GroupPriorities,
                         ::testing::Values(PrioRow{"RenderNode", true, false, 0x3},
                                           PrioRow{"RenderNodeWithCapSysNice", true, true, 0xF},
                                           PrioRow{"PrimaryNodeMaster", false, false, 0xF}),
                         [](const ::testing::TestParamInfo<PrioRow>& info) { return std::string(info.param.name); });

TEST_F(GroupIoctlTest, EveryCsSlotOfAFullGroupRuns) {
    const u32 n = ptdev->csif_info.cs_slot_count;
    ASSERT_EQ(n, 8u);
    u32 g = 0;
    ASSERT_EQ(group_create_ret(&g, std::vector<QueueSpec>(n)), 0);
    std::vector<u32> syncs;
    for (u32 q = 0; q < n; q++)
        syncs.push_back(submit_stream(g, q, store_stream(8 * q, 100 + q), 4 * 8));
    ASSERT_EQ(syncobj_wait(syncs, 1000 * kMs), 0);
    for (u32 q = 0; q < n; q++) {
        EXPECT_EQ(fence_status(syncs[q]), 1);
        EXPECT_EQ(read_data(8 * q), 100u + q);
    }
    // One more queue than there are CS slots: refused rather than scheduled onto a slot the FW
    // does not have.
    u32 h = 0;
    EXPECT_EQ(group_create_ret(&h, std::vector<QueueSpec>(n + 1)), -EINVAL);
}

TEST_F(GroupIoctlTest, TopLevelArgumentBadPointerIsEFAULT) {
    // The DRM core copies the top-level struct in and out: not user memory, -EFAULT.
    drm_panthor_group_create create = group_args();
    EXPECT_EQ(drm::ioctl(file, DRM_IOCTL_PANTHOR_GROUP_CREATE, &create), -EFAULT);
    drm_panthor_group_submit submit{};
    EXPECT_EQ(drm::ioctl(file, DRM_IOCTL_PANTHOR_GROUP_SUBMIT, &submit), -EFAULT);
    drm_panthor_group_get_state st{};
    EXPECT_EQ(drm::ioctl(file, DRM_IOCTL_PANTHOR_GROUP_GET_STATE, &st), -EFAULT);
    drm_panthor_group_destroy d{};
    EXPECT_EQ(drm::ioctl(file, DRM_IOCTL_PANTHOR_GROUP_DESTROY, &d), -EFAULT);
    // Nothing was created by the faulting create.
    EXPECT_EQ(group_create(), 1u);
}

// A batch that fails at any stage pushes none of its jobs: the valid first job does not run, its
// signal targets keep the fences they had, a timeline point it would have added does not appear;
// and the queues work normally afterwards.
struct BatchRow {
    const char* name;
    int expected;
    // Makes the second queue submit (queue 1) fail.
    void (*spoil)(GroupIoctlTest::SubmitReq& r, u32 nofence);
};
std::ostream& operator<<(std::ostream& os, const BatchRow& r) {
    return os << r.name;
}
class FailingBatch : public GroupIoctlTest, public ::testing::WithParamInterface<BatchRow> {};

TEST_P(FailingBatch, PushesNothing) {
    const BatchRow& row = GetParam();
    const u32 g = group_create(2);

    // s0 holds the fence of an earlier, completed job.
    const u32 s0 = submit_stream(g, 0, store_stream(8, 1), 4 * 8);
    ASSERT_EQ(syncobj_wait({s0}, 1000 * kMs), 0);
    kshim::dma_fence* before = fence_of(s0);
    ASSERT_NE(before, nullptr);
    const u32 tl = syncobj_create();
    const u32 s1 = syncobj_create();
    const u32 nofence = syncobj_create();

    SubmitReq r;
    r.args.group_handle = g;
    drm_panthor_queue_submit q0{};
    q0.queue_index = 0;
    q0.stream_addr = store_stream(0, kMarker);
    q0.stream_size = 4 * 8;
    drm_panthor_queue_submit q1 = q0;
    q1.queue_index = 1;
    q1.stream_addr = store_stream(16, kMarker);
    r.qs = {q0, q1};
    r.syncs = {{signal_op(s0), signal_op(tl, 1)}, {wait_op(s0), signal_op(s1)}};
    row.spoil(r, nofence);

    ASSERT_EQ(submit_raw(r), row.expected);
    advance(50 * kMs);
    EXPECT_EQ(read_data<u32>(0), 0u) << "the first job ran";
    EXPECT_EQ(read_data<u32>(16), 0u) << "the second job ran";
    kshim::dma_fence* after = fence_of(s0);
    EXPECT_EQ(after, before) << "s0 was given a new fence";
    EXPECT_EQ(fence_status(tl, 1), -EINVAL) << "timeline point 1 appeared";
    EXPECT_EQ(fence_status(s1), -EINVAL);
    kshim::dma_fence_put(before);
    kshim::dma_fence_put(after);

    // Both queues still work, in order.
    const u32 a = submit_stream(g, 0, store_stream(24, 2), 4 * 8);
    const u32 b = submit_stream(g, 1, store_stream(32, 3), 4 * 8);
    ASSERT_EQ(syncobj_wait({a, b}, 1000 * kMs), 0);
    EXPECT_EQ(fence_status(a), 1);
    EXPECT_EQ(fence_status(b), 1);
    EXPECT_EQ(read_data(24), 2u);
    EXPECT_EQ(read_data(32), 3u);
    EXPECT_EQ(group_state(g).state, 0u);
}

using BR = GroupIoctlTest::SubmitReq;

INSTANTIATE_TEST_SUITE_P(
    Stages, FailingBatch,
    ::testing::Values(
        // panthor_job_create of the second job.
        BatchRow{"SecondQueueIndexOutOfRange", -EINVAL, [](BR& r, u32) { r.qs[1].queue_index = 2; }},
        BatchRow{"SecondStreamMisaligned", -EINVAL, [](BR& r, u32) { r.qs[1].stream_addr += 8; }},
        // Copying the sync arrays (after the first job was created).
        BatchRow{"SyncArraysNonZeroTail", -E2BIG,
                 [](BR& r, u32) {
                     r.s_stride = 24;
                     r.s_tail = 1;
                 }},
        // Collecting the signal ops.
        BatchRow{"SecondSignalsUnknownHandle", -EINVAL,
                 [](BR& r, u32) { r.syncs[1].push_back(sync_op(SIG | BIN, kBadHandle)); }},
        // Adding the second job's dependencies, after the first job was armed.
        BatchRow{"SecondWaitsOnHandleWithoutFence", -EINVAL,
                 [](BR& r, u32 nofence) { r.syncs[1].push_back(sync_op(BIN, nofence)); }},
        BatchRow{"SecondWaitsOnUnknownHandle", -ENOENT,
                 [](BR& r, u32) { r.syncs[1].push_back(sync_op(BIN, kBadHandle)); }},
        BatchRow{"SecondWaitHasBadFlags", -EINVAL, [](BR& r, u32) { r.syncs[1][0].flags |= 0x100; }}),
    [](const ::testing::TestParamInfo<BatchRow>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace panthor::testing

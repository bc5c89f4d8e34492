// Mirrors drivers/dma-buf/sw_sync.c and sync_debug.h: the sw_sync debug driver (/dev/sw_sync).
//
// DOC: Each open of sw_sync creates a timeline: a 32-bit counter (starting at 0) and the
// unsignalled fences created on it, ordered by seqno. SW_SYNC_IOC_CREATE_FENCE makes a fence
// at a seqno and returns it as a sync_file fd (a fence at an already-passed seqno is born
// signalled; a second unsignalled fence at the same seqno is the same fence). SW_SYNC_IOC_INC
// advances the counter and signals, in order, every fence whose seqno it reached (32-bit
// wrapping comparison, like the kernel's). Closing the timeline (sw_sync_debugfs_release)
// signals the fences still pending with -ENOENT; the timeline itself lives on until its last
// fence is released. SW_SYNC_GET_DEADLINE reads back the earliest deadline set on one of its
// fences (-ENOENT when none was).
//
// The file (sw_sync_debugfs_fops, opened by sw_sync_open_file) holds the timeline; its ioctls
// make sync_file descriptors on the current table. The sync_timeline functions below are the
// same without a file (tests). The timeline lock is every one of its fences' lock, as upstream.
#pragma once
#include <atomic>
#include <boost/intrusive/list.hpp>
#include <boost/intrusive/set.hpp>

#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/fs/file.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/spinlock.h"

namespace kshim {

struct sync_pt {
    dma_fence base;
    // On the timeline's pt_tree while unsignalled.
    boost::intrusive::set_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> node;
    // On a local list only while the signaller holds a reference to drop outside the lock.
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> link;
    ktime_t deadline = 0;  // under the fence lock, valid with SW_SYNC_HAS_DEADLINE_BIT
};

// Orders by seqno the way the kernel's 32-bit timeline compares (the difference as an int).
struct sync_pt_seqno_less {
    bool operator()(const sync_pt& a, const sync_pt& b) const {
        return static_cast<s32>(static_cast<u32>(a.base.seqno) - static_cast<u32>(b.base.seqno)) < 0;
    }
};
using sync_pt_tree =
    boost::intrusive::multiset<sync_pt, boost::intrusive::member_hook<sync_pt, decltype(sync_pt::node), &sync_pt::node>,
                               boost::intrusive::compare<sync_pt_seqno_less>>;

struct sync_timeline {
    struct kref kref;  // the open file's plus one per fence
    char name[32] = {};
    // Protects pt_tree and the value updates; the lock of every fence on the timeline.
    SpinLock lock{"sync_timeline.lock"};
    u64 context = 0;
    std::atomic<u32> value{0};  // written under lock; fences' `signaled` reads it without
    sync_pt_tree pt_tree;
};
using sw_sync_timeline = sync_timeline;

// ---- kernel API ----
// sw_sync_debugfs_open: a new timeline named `name` (nullptr: the current task's name, as the
// kernel's task comm). 0 or -ENOMEM.
int sw_sync_debugfs_open(sync_timeline** out, const char* name = nullptr);
// sw_sync_debugfs_release: the close of the file. Signals what is pending with -ENOENT and
// drops the file's reference. Returns 0.
int sw_sync_debugfs_release(sync_timeline* obj);
// The file_operations' unlocked_ioctl: SW_SYNC_IOC_CREATE_FENCE, SW_SYNC_IOC_INC,
// SW_SYNC_GET_DEADLINE (uapi/linux/sync_file.h); `arg` is the user pointer (kernel_shim/uaccess.h).
// -ENOTTY for any other cmd, -EFAULT for a bad pointer, else as documented at each ioctl.
long sw_sync_ioctl(sync_timeline* obj, unsigned int cmd, u64 arg);

// A new fence at `value` (one reference), or nullptr on -ENOMEM.
sync_pt* sync_pt_create(sync_timeline* obj, unsigned int value);
// Advances the timeline by inc and signals the fences it reached.
void sync_timeline_signal(sync_timeline* obj, unsigned int inc);
// The sw_sync point behind a fence, or nullptr when the fence is not from sw_sync.
sync_pt* dma_fence_to_sync_pt(dma_fence* fence);
// Live timelines (leak checks: a test that closed everything expects 0).
size_t sw_sync_timelines_live();

// /dev/sw_sync's file operations, and an open of it: the file (one reference, a new timeline) or
// ERR_PTR(-ENOMEM).
extern const file_operations sw_sync_debugfs_fops;
file* sw_sync_open_file(int flags);

}  // namespace kshim

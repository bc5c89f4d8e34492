// Mirrors include/linux/sync_file.h and the SYNC_IOC_* semantics of drivers/dma-buf/sync_file.c,
// as an in-process object: the file-descriptor export comes with the DRM preload library.
#pragma once
#include "kernel_shim/dma-buf/dma-fence.h"

namespace kshim {

struct sync_file {
    kref refcount;  // the struct file's reference count
    char user_name[32] = {};
    dma_fence* fence = nullptr;  // one reference
};

// Mirrors struct sync_fence_info of include/uapi/linux/sync_file.h.
struct sync_fence_info {
    char obj_name[32];
    char driver_name[32];
    s32 status;  // 1 signalled, 0 pending, < 0 error
    u32 flags;
    u64 timestamp_ns;
};

// Takes its own reference to `fence`.
sync_file* sync_file_create(dma_fence* fence);
sync_file* sync_file_get(sync_file* file);
void sync_file_put(sync_file* file);
// A new reference to the file's fence.
dma_fence* sync_file_get_fence(sync_file* file);
// The user-set name, or "driver-timeline-context-seqno" of the fence.
const char* sync_file_get_name(sync_file* file, char* buf, int len);
void sync_file_set_name(sync_file* file, const char* name);
// SYNC_IOC_MERGE: a new file whose fence is the merge of both (nullptr on -ENOMEM).
sync_file* sync_file_merge(const char* name, sync_file* a, sync_file* b);
// SYNC_IOC_FILE_INFO's status.
int sync_file_get_status(sync_file* file);
// SYNC_IOC_FILE_INFO's per-fence list: with *num_fences == 0 only counts; else fills up to it.
int sync_file_get_fence_info(sync_file* file, sync_fence_info* info, u32* num_fences);

}  // namespace kshim
